import type { CircuitBreaker, CircuitTransition } from './circuit-breaker.js'

/**
 * How circuit breakers' transitions reach the other processes of a host. One process (no `server.workers`): no one
 * to tell. With `server.workers` > 1 (cluster/worker-breakers.ts installs the sharing before the worker boots) a
 * worker whose breaker opens or closes publishes it; the primary passes it to every other worker, which applies it
 * to its own breaker of the same upstream and target (`CircuitBreaker.applyShared`), and keeps the latest per
 * target for workers that start later. So the failures one worker saw protect the others at once, instead of each
 * worker spending its own `consecutive_failures` on a backend that is already known to be failing.
 *
 * Half-open is not shared: each worker lets its own trials through when the open time is over, and the first
 * verdict (closed, or opened again for twice as long) is passed on to all.
 */

/** A transition as it travels: which upstream (registry key) and target (URL) it belongs to. */
export interface SharedTransition extends CircuitTransition {
  readonly upstream: string
  readonly url: string
}

export interface BreakerSharing {
  publish (transition: SharedTransition): void
}

let sharing: BreakerSharing = { publish () {} }
const breakers = new Map<string, Set<CircuitBreaker>>()
/**
 * The latest opening other processes shared per upstream and target, until a later transition of the same target
 * replaces or removes it (one entry per target at most): a breaker made later here (a store's lane is built on its
 * first request) starts from an opening that has not ended instead of learning the failures again.
 */
const openings = new Map<string, SharedTransition>()

/** Installs how this process shares transitions (a worker of `server.workers`); before the gateway boots. */
export function useBreakerSharing (next: BreakerSharing): void {
  sharing = next
}

/** Tells the other processes (when there are any) what this process's breaker did. */
export function publishTransition (transition: SharedTransition): void {
  if (transition.to !== 'half_open') sharing.publish(transition)
}

function keyOf (upstream: string, url: string): string {
  return `${upstream}\u0000${url}`
}

/** A target's breaker starts (its upstream was built or reconciled) or stops (the target or upstream retired). */
export function registerBreaker (upstream: string, url: string, breaker: CircuitBreaker): void {
  const key = keyOf(upstream, url)
  let set = breakers.get(key)
  if (set === undefined) {
    set = new Set()
    breakers.set(key, set)
  }
  set.add(breaker)
  const opening = openings.get(key)
  if (opening !== undefined) breaker.applyShared(opening)
}

export function unregisterBreaker (upstream: string, url: string, breaker: CircuitBreaker): void {
  const key = keyOf(upstream, url)
  const set = breakers.get(key)
  if (set === undefined) return
  set.delete(breaker)
  if (set.size === 0) breakers.delete(key)
}

/** A transition another process made, applied to this process's breakers of that upstream and target. */
export function applySharedTransition (transition: SharedTransition): void {
  const key = keyOf(transition.upstream, transition.url)
  if (transition.to === 'open') openings.set(key, transition)
  else openings.delete(key)
  const set = breakers.get(key)
  if (set === undefined) return
  for (const breaker of set) breaker.applyShared(transition)
}
