import { gatewaySettings } from '../config/gateway-settings.js'
import type { ConfigIndexes } from '../config/indexes.js'
import type { GatewayConfig } from '../config/types.js'
import { connectionSlots } from '../limits/connection-slots.js'
import type { ConnectionSlots } from '../plugin/connection-slots.js'
import type { LimiterHandle } from '../plugin/limiter.js'
import type { TokenVerifierView } from '../plugin/tokens.js'
import type { ApiKeyVerifierView } from '../plugin/api-keys.js'
import type { GatewaySettings } from '../plugin/gateway-settings.js'
import { storeReacher } from './store-reacher.js'
import type { SharedResources } from '../runtime/shared-resources.js'

/** What a policy's context offers of the gateway: the config and the shared resources as narrow views. */
export interface PolicyViews {
  settings: GatewaySettings
  reachStore: ReturnType<typeof storeReacher>
  tokens: TokenVerifierView
  apiKeys: ApiKeyVerifierView
  limiter: (name: string) => LimiterHandle
  connectionSlots: ConnectionSlots
}

/**
 * The narrow views a policy's context offers (`context.settings`, `context.reachStore`, `context.tokens`,
 * `context.apiKeys`, `context.limiter`, `context.connectionSlots`): a policy sees what it may use, never the config
 * or the resources themselves.
 */
export function policyViews (shared: SharedResources, config: GatewayConfig, indexes: ConfigIndexes): PolicyViews {
  const verifier = shared.tokens
  const keys = shared.apiKeys
  return {
    settings: gatewaySettings(config),
    reachStore: storeReacher(indexes),
    // Held by the host: a Map in one process, the primary's counts under server.workers (limits/connection-slots.ts).
    connectionSlots: connectionSlots(),
    apiKeys: {
      verify: function verifyApiKey (key, slot) { return keys.verify(key, config, indexes, slot) },
    },
    tokens: {
      verify: function verifyToken (token, slot) { return verifier.verifyFast(token, config, indexes, slot) },
    },
    limiter: function limiterOf (name: string): LimiterHandle {
      const limit = config.rate_limits[name]
      if (limit === undefined) throw new Error(`unknown rate limit "${name}": define it under rate_limits`)
      const counter = shared.limiters.counter(name, limit)
      return { count: counter.count.bind(counter), onStoreError: shared.limiters.onStoreError }
    },
  }
}
