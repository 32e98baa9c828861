import { buildIndexes } from './indexes.js'
import { chainKey, type Snapshot } from './snapshot.js'
import { policyName } from './semantic-checks.js'
import type { GatewayConfig } from './types.js'
import type { ConfigCatalog } from './load-config.js'
import type { PolicyStep } from '../pipeline/policy.js'
import type { SharedResources } from '../pipeline/shared-resources.js'

/**
 * Builds every route's policy chain for a validated config. Policy factories run here, once per route per
 * snapshot, never per request. A factory that throws makes the whole snapshot fail (a reload then keeps the
 * running one).
 */
export function buildSnapshot (config: GatewayConfig, version: number, catalog: ConfigCatalog, shared: SharedResources): Snapshot {
  const indexes = buildIndexes(config)
  const chains = new Map<string, readonly PolicyStep[]>()
  for (const [service, settings] of Object.entries(config.services)) {
    for (const [routeId, routePolicies] of Object.entries(settings.routes)) {
      const steps = [...settings.policies, ...routePolicies].map((entry) => {
        const name = policyName(entry)
        const plugin = catalog.plugins.get(name)
        if (plugin === undefined) throw new Error(`unknown policy "${name}"`)
        return plugin.create(entry[name] ?? {}, { config, indexes, shared, service, routeId, envelope: settings.envelope })
      })
      chains.set(chainKey(service, routeId), steps)
    }
  }
  return { version, config, indexes, chains }
}
