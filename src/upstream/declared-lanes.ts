import { activeLane } from '../config/active-lane.js'
import type { GatewayConfig, LaneConfig } from '../config/types.js'
import type { CircuitBreakerSettings } from './circuit-breaker.js'

/** A lane as its upstream is derived from it: the store's lane, with the live proxy's circuit breaker when set. */
export type DeclaredLane = LaneConfig & { readonly circuit_breaker?: CircuitBreakerSettings }

/**
 * The lanes a config declares, by store id: every store with an active install and a lane, the only ones the live
 * relay and fan-out send to (and `<store id>/next` for a lane's `next` version, which only the live split sends to). The gateway hands them to `SharedUpstreams.lanes.reconcile` with each snapshot (boot
 * and reload), so the upstream of a store the reload removed, deactivated or left without a lane is retired: its
 * requests in flight finish, then its pools close.
 *
 * With `services.live.circuit_breaker` each lane is declared with it (a copy of the lane, the same copy for the
 * snapshot's life): every lane gets its own breaker. Without one the store's own lane object is declared, so the
 * registry's same-object check holds for the live relay's requests.
 */
export function declaredLanes (config: GatewayConfig): Map<string, DeclaredLane> {
  const breaker = liveCircuitBreaker(config)
  const lanes = new Map<string, DeclaredLane>()
  for (const organization of config.organizations) {
    for (const store of organization.stores) {
      const lane = activeLane(store)
      if (lane === undefined) continue
      lanes.set(store.id, breaker === undefined ? lane : withBreaker(lane, breaker))
      // A new version of the store's lane software, for the live split (services/live/lane-version.ts).
      if (lane.next !== undefined) lanes.set(nextLaneKey(store.id), breaker === undefined ? lane.next : withBreaker(lane.next, breaker))
    }
  }
  return lanes
}

/** `services.live.circuit_breaker`, validated by the live service's schema (read here without importing it). */
function liveCircuitBreaker (config: GatewayConfig): CircuitBreakerSettings | undefined {
  return (config.services.live as { circuit_breaker?: CircuitBreakerSettings } | undefined)?.circuit_breaker
}

const copies = new WeakMap<LaneConfig, DeclaredLane>()

/** One copy per (frozen) lane object: each reconcile of one snapshot hands the registry the same source. */
function withBreaker (lane: LaneConfig, breaker: CircuitBreakerSettings): DeclaredLane {
  let copy = copies.get(lane)
  if (copy === undefined || copy.circuit_breaker !== breaker) {
    copy = { ...lane, circuit_breaker: breaker }
    copies.set(lane, copy)
  }
  return copy
}

/** The lanes registry's key of a store's `lane.next` (its own pool and breaker; `lane` keeps the store id). */
export function nextLaneKey (storeId: string): string {
  return `${storeId}/next`
}
