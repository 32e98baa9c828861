import type { GatewaySettings, StoreReach } from '../plugin/gateway-settings.js'
import { buildIndexes, type ConfigIndexes } from './indexes.js'
import type { GatewayConfig } from './types.js'

// A validated config is deep-frozen: its settings view is built once, whoever asks (the second pass, the snapshot,
// explain), so a policy keying what it keeps per snapshot by the view finds one object. An unfrozen config is not kept.
const settingsByConfig = new WeakMap<GatewayConfig, GatewaySettings>()

/** The read-only view of `config` a policy gets (lanegate/plugin's `GatewaySettings`). */
export function gatewaySettings (config: GatewayConfig, indexes: ConfigIndexes = buildIndexes(config)): GatewaySettings {
  let settings = settingsByConfig.get(config)
  if (settings === undefined) {
    settings = settingsOf(config, indexes)
    if (Object.isFrozen(config)) settingsByConfig.set(config, settings)
  }
  return settings
}

function settingsOf (config: GatewayConfig, indexes: ConfigIndexes): GatewaySettings {
  return Object.freeze({
    // Read when asked: the loader fills a default issuer after the second pass, which already checks policies.
    get issuer () { return config.issuer.issuer },
    scopes: new Set(Object.keys(config.scopes)),
    organizations: new Set(config.organizations.map((o) => o.id)),
    rateLimits: config.rate_limits,
    cacheStoreMaxBytes: config.cache_store.max_bytes,
    clientCertificates: config.server.tls?.client_ca_file !== undefined,
    accountStatus: (clientId: string) => indexes.accounts.get(clientId)?.status,
    reach (organizationId: string, id: string): StoreReach {
      const access = indexes.access(organizationId, id)
      return access === undefined ? 'outside' : access.lane === undefined ? 'reachable' : 'served'
    },
    relays: (service: string) => service === 'live' || config.services[service]?.type === 'proxy',
  })
}
