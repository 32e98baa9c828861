import { isDeepStrictEqual } from 'node:util'
import { recordCircuitTransition } from '../observability/recorders.js'
import { publishTransition, registerBreaker, unregisterBreaker } from './breaker-sharing.js'
import { CircuitBreaker, type CircuitBreakerSettings, type CircuitTransition } from './circuit-breaker.js'
import type { Target } from './target.js'

/** What a target's breaker needs of its upstream: its registry key and its logger (an `UpstreamLogger`). */
interface BreakerOwner {
  readonly name: string
  readonly logger?: {
    warn (object: Record<string, unknown>, message: string): void
    info (object: Record<string, unknown>, message: string): void
  }
}

/**
 * Gives each target the breaker `settings` asks for (hot reload included): a target whose breaker has the same
 * settings keeps it, and its state; one with other settings gets a new, closed breaker; none when `settings` is
 * undefined. Every breaker is registered for the transitions other workers share (breaker-sharing.ts).
 */
export function attachBreakers (owner: BreakerOwner, targets: readonly Target[], settings: CircuitBreakerSettings | undefined): void {
  for (const target of targets) {
    const current = target.breaker
    if (current !== undefined && settings !== undefined && isDeepStrictEqual(current.settings, settings)) continue
    if (current !== undefined) unregisterBreaker(owner.name, target.url, current)
    if (settings === undefined) {
      target.breaker = undefined
      continue
    }
    const breaker = new CircuitBreaker(settings, (transition) => { transitioned(owner, target.url, transition) })
    target.breaker = breaker
    registerBreaker(owner.name, target.url, breaker)
  }
}

/** The targets leave their upstream (removed by a reload, or the upstream retired): their breakers stop sharing. */
export function detachBreakers (upstream: string, targets: readonly Target[]): void {
  for (const target of targets) {
    if (target.breaker !== undefined) unregisterBreaker(upstream, target.url, target.breaker)
  }
}

/** Logged (opening at warn), counted and shared with the other workers. */
function transitioned (owner: BreakerOwner, url: string, transition: CircuitTransition): void {
  recordCircuitTransition(owner.name, url, transition.to)
  const fields = { upstream: owner.name, upstream_target: url, circuit_state: transition.to, reason: transition.reason }
  if (transition.to === 'open') owner.logger?.warn({ ...fields, open_seconds: transition.openMs / 1000 }, 'upstream circuit opened')
  else owner.logger?.info(fields, transition.to === 'closed' ? 'upstream circuit closed' : 'upstream circuit half-open')
  publishTransition({ ...transition, upstream: owner.name, url })
}
