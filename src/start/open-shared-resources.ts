import { resolve } from 'node:path'
import type { FastifyBaseLogger } from 'fastify'
import type { GatewayConfig } from '../config/types.js'
import type { SharedResources } from '../runtime/shared-resources.js'
import { createKeyStore } from '../oauth/key-store.js'
import { loadDevUserIssuer } from '../oauth/dev-user-issuer.js'
import { createTokenVerifier } from '../auth/token-verifier.js'
import { createApiKeyVerifier } from '../auth/api-key-verifier.js'
import { createLimiterRegistry } from '../limits/limiter-registry.js'
import { createStore } from '../store/create-store.js'
import type { Store } from '../store/store.js'
import { addressOf, retryUntilDeadline, StartupDependencyError } from './startup-dependencies.js'
import { createSharedUpstreams } from '../upstream/registry.js'

export interface OwnedSharedResources extends SharedResources {
  /** Readiness checks of the dependencies the config uses: `database` always, `redis` with a Redis limiter store. */
  readonly dependencyChecks: Readonly<Record<string, () => Promise<void>>>
  close (): Promise<void>
}

/**
 * Opens everything that outlives a config reload: keys, token cache, limiters, the durable store, upstream pools.
 * PostgreSQL and the rate-limit Redis are retried with backoff until `server.startup_timeout_ms` has passed since
 * the call; then it throws StartupDependencyError, having closed whatever it had opened (so the process can exit).
 */
export async function openSharedResources (config: GatewayConfig, logger: FastifyBaseLogger): Promise<OwnedSharedResources> {
  const dataDir = resolve(config.server.data_dir)
  const timeoutMs = config.server.startup_timeout_ms
  const deadline = Date.now() + timeoutMs
  const keys = await createKeyStore(config, { logger })
  let store: Store
  try {
    store = config.storage.driver === 'postgres'
      ? await retryUntilDeadline(
        { dependency: 'PostgreSQL (storage.postgres_url)', address: addressOf(config.storage.postgres_url), timeoutMs, deadline },
        () => createStore(config.storage, dataDir),
        (error, delayMs) => logger.warn({ err: error, retry_in_ms: delayMs }, 'PostgreSQL not reachable yet; retrying'),
      )
      : await createStore(config.storage, dataDir)
  } catch (error) {
    keys.close()
    throw error
  }
  const limiters = createLimiterRegistry(config.rate_limit_store)
  try {
    // With Redis, connect before serving; otherwise the first requests would meet on_store_error. The client
    // reconnects by itself (backing off up to 2 s), so waiting for 'ready' until the deadline is the retry.
    await limiters.ready(Math.max(1, deadline - Date.now()))
  } catch (error) {
    await limiters.close()
    await store.close()
    keys.close()
    throw new StartupDependencyError('the rate-limit Redis (rate_limit_store.redis_url)', addressOf(config.rate_limit_store.redis_url), timeoutMs, error)
  }
  const tokens = createTokenVerifier({ keys, logger, devUserIssuer: loadDevUserIssuer })
  const upstreams = createSharedUpstreams(logger)
  const apiKeys = createApiKeyVerifier()
  return {
    logger,
    keys,
    store,
    limiters,
    tokens,
    apiKeys,
    upstreams,
    dependencyChecks: {
      database: () => store.ping(),
      ...(config.rate_limit_store.driver === 'redis' ? { redis: () => limiters.ping() } : {}),
    },
    close: async () => {
      keys.close()
      await upstreams.close()
      await limiters.close()
      await store.close()
    },
  }
}
