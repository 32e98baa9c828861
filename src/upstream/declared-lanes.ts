import { activeLane } from '../config/active-lane.js'
import type { GatewayConfig, LaneConfig } from '../config/types.js'

/**
 * The lanes a config declares, by store id: every store with an active install and a lane, the only ones the live
 * relay and fan-out send to. The gateway hands them to `SharedUpstreams.lanes.reconcile` with each snapshot (boot
 * and reload), so the upstream of a store the reload removed, deactivated or left without a lane is retired: its
 * requests in flight finish, then its pools close.
 */
export function declaredLanes (config: GatewayConfig): Map<string, LaneConfig> {
  const lanes = new Map<string, LaneConfig>()
  for (const organization of config.organizations) {
    for (const store of organization.stores) {
      const lane = activeLane(store)
      if (lane !== undefined) lanes.set(store.id, lane)
    }
  }
  return lanes
}
