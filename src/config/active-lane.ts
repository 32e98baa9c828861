import type { LaneConfig, StoreConfig } from './types.js'

/**
 * The lane the gateway may send to for `store`: its lane while its install is active, else none. Fan-out's lookups
 * and the lanes declared to the upstream registry share it (the live relay's store index, config/indexes.ts,
 * answers the same from its `installActive` and `lane`).
 */
export function activeLane (store: StoreConfig): LaneConfig | undefined {
  return store.install_active ? store.lane : undefined
}
