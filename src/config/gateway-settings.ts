import type { GatewaySettings, StoreReach } from '../plugin/gateway-settings.js'
import { buildIndexes, type ConfigIndexes, type StoreAccess } from './indexes.js'
import type { GatewayConfig } from './types.js'

// Keyed by the config's indexes, which the loader keeps from the second pass on (indexes.ts): check, requires,
// create and explain of one config get one view, so a policy may key what it keeps per snapshot by it.
const settingsByIndexes = new WeakMap<ConfigIndexes, GatewaySettings>()

/** The read-only view of `config` a policy gets (lanegate/plugin's `GatewaySettings`). */
export function gatewaySettings (config: GatewayConfig): GatewaySettings {
  const indexes = buildIndexes(config)
  let settings = settingsByIndexes.get(indexes)
  if (settings === undefined) {
    settings = settingsOf(config, indexes)
    settingsByIndexes.set(indexes, settings)
  }
  return settings
}

/** How far a store-access answer reaches: the rule `settings.reach` and `context.reachStore` both apply. */
export function reachOf (access: StoreAccess | undefined): StoreReach {
  return access === undefined ? 'outside' : access.lane === undefined ? 'reachable' : 'served'
}

function settingsOf (config: GatewayConfig, indexes: ConfigIndexes): GatewaySettings {
  return Object.freeze({
    // Set before the second pass: the loader fills the default first (config/default-issuer.ts).
    issuer: config.issuer.issuer,
    scopes: new Set(Object.keys(config.scopes)),
    organizations: new Set(config.organizations.map((o) => o.id)),
    rateLimits: config.rate_limits,
    cacheStoreMaxBytes: config.cache_store.max_bytes,
    clientCertificates: config.server.tls?.client_ca_file !== undefined,
    accountStatus: (clientId: string) => indexes.accounts.get(clientId)?.status,
    reach: (organizationId: string, id: string) => reachOf(indexes.access(organizationId, id)),
    relays: (service: string) => service === 'live' || config.services[service]?.type === 'proxy',
  })
}
