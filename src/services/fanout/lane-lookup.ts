import { activeLane } from '../../config/active-lane.js'
import type { GatewayConfig, LaneConfig, StoreConfig } from '../../config/types.js'

// Config objects are immutable per snapshot: index each one once.
const byConfig = new WeakMap<GatewayConfig, ReadonlyMap<string, StoreConfig>>()

/**
 * The lane of an active store in `config`, or undefined (unknown store, install inactive, no lane). Deliveries
 * resolve lanes from the CURRENT config, so a lane moved by a reload is reached at its new address.
 */
export function activeLaneOf (config: GatewayConfig, storeOrgId: string): LaneConfig | undefined {
  let stores = byConfig.get(config)
  if (stores === undefined) {
    stores = new Map(config.organizations.flatMap((o) => o.stores.map((s) => [s.id, s] as const)))
    byConfig.set(config, stores)
  }
  const store = stores.get(storeOrgId)
  return store === undefined ? undefined : activeLane(store)
}
