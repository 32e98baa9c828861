import { resolve } from 'node:path'
import type { FastifyBaseLogger } from 'fastify'
import type { GatewayConfig } from './config/types.js'
import type { SharedResources } from './pipeline/shared-resources.js'
import { createKeyStore } from './oauth/key-store.js'
import { loadDevUserIssuer } from './oauth/dev-user-issuer.js'
import { createTokenVerifier } from './auth/token-verifier.js'
import { createLimiterRegistry } from './pipeline/limiter-registry.js'
import { createStore } from './store/create-store.js'
import { createSharedUpstreams } from './upstream/registry.js'

export interface OwnedSharedResources extends SharedResources {
  /** Readiness checks of the dependencies the config uses: `database` always, `redis` with a Redis limiter store. */
  readonly dependencyChecks: Readonly<Record<string, () => Promise<void>>>
  close (): Promise<void>
}

/** Opens everything that outlives a config reload: keys, token cache, limiters, the durable store, upstream pools. */
export async function openSharedResources (config: GatewayConfig, logger: FastifyBaseLogger): Promise<OwnedSharedResources> {
  const dataDir = resolve(config.server.data_dir)
  const keys = await createKeyStore(config, { logger })
  const store = await createStore(config.storage, dataDir)
  const limiters = createLimiterRegistry(config.rate_limit_store)
  // With Redis, connect before serving; otherwise the first requests would meet on_store_error.
  await limiters.ready()
  const tokens = createTokenVerifier({ keys, logger, devUserIssuer: loadDevUserIssuer })
  const upstreams = createSharedUpstreams(logger)
  return {
    logger,
    keys,
    store,
    limiters,
    tokens,
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
