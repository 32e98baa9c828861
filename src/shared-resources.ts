import { resolve } from 'node:path'
import type { FastifyBaseLogger } from 'fastify'
import type { GatewayConfig } from './config/types.js'
import type { SharedResources } from './pipeline/shared-resources.js'
import { createKeyStore } from './oauth/key-store.js'
import { createTokenVerifier } from './auth/token-verifier.js'
import { createLimiterRegistry } from './pipeline/limiter-registry.js'
import { createStore } from './store/create-store.js'

export interface OwnedSharedResources extends SharedResources {
  close (): Promise<void>
}

/** Opens everything that outlives a config reload: keys, token cache, limiters, the durable store. */
export async function openSharedResources (config: GatewayConfig, logger: FastifyBaseLogger): Promise<OwnedSharedResources> {
  const dataDir = resolve(config.server.data_dir)
  const keys = await createKeyStore(config)
  const store = await createStore(config.storage, dataDir)
  const limiters = createLimiterRegistry(config.rate_limit_store)
  const tokens = createTokenVerifier({ keys, logger })
  return {
    logger,
    keys,
    store,
    limiters,
    tokens,
    close: async () => {
      await limiters.close?.()
      await store.close()
    },
  }
}
