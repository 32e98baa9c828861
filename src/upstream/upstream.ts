import { isDeepStrictEqual } from 'node:util'
import { ActiveHealth } from './active-health.js'
import { RetryBudget } from './retry-budget.js'
import { OutlierEjector } from './outlier-ejection.js'
import { attachBreakers, detachBreakers } from './target-breakers.js'
import { poolFingerprint, type UpstreamSettings } from './settings.js'
import { Target } from './target.js'
import { oneByteCopy } from '../node-tuning/one-byte-copy.js'

/** Where an upstream reports what its health checks did (a pino logger fits). */
export interface UpstreamLogger {
  warn (object: Record<string, unknown>, message: string): void
  info (object: Record<string, unknown>, message: string): void
  /** Upstream TLS files that do not load (backend-tls.ts); optional so a logger of warnings alone still fits. */
  error? (object: Record<string, unknown>, message: string): void
}

/**
 * One upstream: a set of weighted targets, each with its own connection pool, a balancer over the targets that
 * health checks have not ejected, and the health checks. Requests go through `startRelay` (relay.ts: streams a
 * caller's request and the answer) or `callUpstream` (call.ts: a request with a bounded, buffered answer).
 *
 * `reconcile` applies new settings in place (hot reload): kept targets keep their pool, health and counters;
 * removed targets' pools drain (requests in flight finish) and close; a change of socket cap or timeouts replaces
 * every pool the same way.
 */
export class Upstream {
  settings: UpstreamSettings
  targets: Target[] = []
  private fingerprint = ''
  private health: ActiveHealth | undefined
  /** Targets `retire` took out of service, still draining: a shutdown meanwhile destroys them too. */
  private retired: Target[] = []
  /** least_connections: where the scan for a tie starts, so ties rotate. */
  private cursor = 0
  /** `retry.budget`: what retries may still be sent; undefined without one (retries bounded by `attempts` only). */
  budget: RetryBudget | undefined
  /** `outlier_ejection`: compares the targets' failure rates every interval; undefined without it. */
  outliers: OutlierEjector | undefined
  /** `settings.credential`, one byte per character (node-tuning/one-byte-copy.ts): sent as Authorization on every request. */
  credential: string | undefined

  /**
   * `name` is the upstream's `upstream` label in `lanegate_upstream_*` metrics (a lane's store id, `timeseries`):
   * the registry key, never a target address.
   */
  constructor (settings: UpstreamSettings, readonly logger?: UpstreamLogger, readonly name = 'upstream') {
    this.settings = settings
    this.reconcile(settings)
  }

  /** Applies new settings; a no-op for the same object. See the class comment. */
  reconcile (settings: UpstreamSettings): void {
    if (settings === this.settings && this.targets.length > 0) return
    const fingerprint = poolFingerprint(settings)
    const keep = fingerprint === this.fingerprint
    const old = new Map(this.targets.map((target) => [target.url, target]))
    const next: Target[] = []
    for (const wanted of settings.targets) {
      const existing = keep ? old.get(wanted.url) : undefined
      if (existing !== undefined && !next.includes(existing)) {
        existing.weight = wanted.weight
        existing.current = 0
        old.delete(wanted.url)
        next.push(existing)
      } else {
        const fresh = new Target(wanted, settings, this.logger)
        // New pool settings (timeouts, sockets, TLS) rebuild the target, not what was learnt of the backend: its
        // breaker (attachBreakers below replaces it only for other breaker settings) and its outlier standing.
        const previous = old.get(wanted.url)
        if (previous !== undefined) {
          fresh.breaker = previous.breaker
          fresh.outcomes = previous.outcomes
          fresh.outlierUntil = previous.outlierUntil
          previous.breaker = undefined
        }
        next.push(fresh)
      }
    }
    for (const removed of old.values()) {
      detachBreakers(this.name, [removed])
      void removed.retire()
    }
    attachBreakers(this, next, settings.circuit_breaker)
    this.budget = budgetFor(settings.retry.budget, this.budget)
    this.reconcileOutliers(settings, next)
    this.targets = next
    this.settings = settings
    this.credential = settings.credential === undefined ? undefined : oneByteCopy(settings.credential)
    this.fingerprint = fingerprint
    const active = settings.health.active
    if (this.health === undefined || !this.health.sameAs(active)) {
      this.health?.stop()
      this.health = active === undefined ? undefined : new ActiveHealth(this, active)
    }
  }

  /** Starts, keeps (equal settings: the new targets get counts) or stops the outlier comparison. */
  private reconcileOutliers (settings: UpstreamSettings, targets: readonly Target[]): void {
    const wanted = settings.outlier_ejection
    const current = this.outliers
    if (current !== undefined && wanted !== undefined && isDeepStrictEqual(current.settings, wanted)) {
      current.attach(targets)
      return
    }
    current?.stop(targets)
    this.outliers = wanted === undefined ? undefined : new OutlierEjector(wanted, this)
    this.outliers?.attach(targets)
  }

  /**
   * The target the next request goes to, skipping ejected ones and `tried` (targets an earlier attempt of the
   * same request used); `undefined` when none is left.
   */
  pick (tried?: readonly Target[]): Target | undefined {
    const targets = this.targets
    let picked: Target | undefined
    if (targets.length === 1) {
      const only = targets[0] as Target
      picked = (tried === undefined || !tried.includes(only)) && only.available() ? only : undefined
    } else {
      picked = this.settings.balance === 'least_connections' ? this.leastConnections(targets, tried) : this.roundRobin(targets, tried)
    }
    // A half-open breaker counts the trial it lets through.
    if (picked?.breaker !== undefined) picked.breaker.admit()
    return picked
  }

  /**
   * When `pick` found no target and a circuit breaker keeps at least one out: the seconds until the first of them
   * lets a trial through (the caller's `Retry-After`); 0 when none is open (health checks ejected them all).
   */
  circuitRetryAfter (): number {
    let soonest = 0
    for (const target of this.targets) {
      const seconds = target.breaker?.retryAfterSeconds() ?? 0
      if (seconds !== 0 && (soonest === 0 || seconds < soonest)) soonest = seconds
    }
    return soonest
  }

  /** Smooth weighted round robin (nginx's): each cycle of sum(weights) picks gives every target its weight, spread out. */
  private roundRobin (targets: readonly Target[], tried: readonly Target[] | undefined): Target | undefined {
    let total = 0
    let best: Target | undefined
    for (const target of targets) {
      if (!target.available() || (tried !== undefined && tried.includes(target))) continue
      target.current += target.weight
      total += target.weight
      if (best === undefined || target.current > best.current) best = target
    }
    if (best !== undefined) best.current -= total
    return best
  }

  /** The target with the fewest requests in flight per unit of weight; ties go round. */
  private leastConnections (targets: readonly Target[], tried: readonly Target[] | undefined): Target | undefined {
    let best: Target | undefined
    let bestLoad = Infinity
    const n = targets.length
    const start = this.cursor
    for (let i = 0; i < n; i++) {
      const target = targets[(start + i) % n] as Target
      if (!target.available() || (tried !== undefined && tried.includes(target))) continue
      const load = target.inFlight / target.weight
      if (load < bestLoad) {
        best = target
        bestLoad = load
      }
    }
    this.cursor = (start + 1) % n
    return best
  }

  /** A target failed at the transport level: counted against passive health, logged when it ejects it. */
  reportFailure (target: Target, kind: string): void {
    if (target.recordFailure(this.settings.health.passive)) {
      this.logger?.warn({ upstream_target: target.url, upstream_failure: kind, eject_seconds: this.settings.health.passive?.eject_seconds }, 'upstream target ejected')
    }
  }

  /**
   * Takes the upstream out of service (its block was removed by a reload): health checks stop now, every target
   * takes no new request, and each pool closes once its requests in flight have finished. Resolves when all are
   * closed.
   */
  async retire (): Promise<void> {
    this.health?.stop()
    this.health = undefined
    const targets = this.targets
    this.targets = []
    detachBreakers(this.name, targets)
    this.outliers?.stop(targets)
    this.outliers = undefined
    this.retired.push(...targets)
    await Promise.all(targets.map((target) => target.retire()))
  }

  /** Stops health checks and closes every connection now, draining ones included (shutdown). */
  async close (): Promise<void> {
    this.health?.stop()
    this.health = undefined
    const targets = [...this.targets, ...this.retired]
    detachBreakers(this.name, this.targets)
    this.outliers?.stop(this.targets)
    this.outliers = undefined
    this.targets = []
    this.retired = []
    await Promise.all(targets.map((target) => target.destroy()))
  }
}

/** The budget `wanted` asks for: the current one kept when its settings are equal (a reload keeps what it saved). */
function budgetFor (wanted: UpstreamSettings['retry']['budget'], current: RetryBudget | undefined): RetryBudget | undefined {
  if (wanted === undefined) return undefined
  if (current !== undefined && isDeepStrictEqual(current.settings, wanted)) return current
  return new RetryBudget(wanted)
}
