import type { LaneConfig, StoreConfig } from './types.js'

/**
 * The lane the gateway may send to for `store`: its lane while its install is active, else none. The store-access
 * rule (config/indexes.ts `access`, which the live relay and fan-out read) and the lanes declared to the upstream
 * registry share it.
 */
export function activeLane (store: StoreConfig): LaneConfig | undefined {
  return store.install_active ? store.lane : undefined
}
