import { RollingWindow } from './rolling-window.js'

/**
 * A target's circuit breaker settings (a `proxy` block's `upstream.circuit_breaker`, validated and defaulted).
 * `consecutive_failures`, `failure_rate` and `slow` are rules of their own: any of them set opens the breaker (the
 * block's check asks for at least one, with its YAML path).
 */
export interface CircuitBreakerSettings {
  /** Answer statuses that count as failures; a no-answer failure (refused, reset, timeout…) always counts. */
  readonly failure_statuses: readonly number[]
  /** Opens after this many failures in a row. */
  readonly consecutive_failures?: number
  /** Opens when failures are `percent` % or more of at least `min_requests` answers over the last `window_seconds`. */
  readonly failure_rate?: RateRule
  /** Opens when answers whose head took `ms` or more are `percent` % or more of the window's (at least `min_requests`). */
  readonly slow?: RateRule & { readonly ms: number }
  /** How long it stays open the first time. */
  readonly open_seconds: number
  /** Each failed half-open trial doubles the open time, up to this. */
  readonly max_open_seconds: number
  /** Real requests let through when half-open: all must succeed to close it; one failure reopens it. */
  readonly half_open_requests: number
}

export interface RateRule {
  readonly percent: number
  readonly window_seconds: number
  readonly min_requests: number
}

/** `closed`: traffic flows; `open`: the target gets none; `half_open`: a few trial requests decide. */
export type CircuitState = 'closed' | 'open' | 'half_open'

/** The gauge value of each state (`lanegate_upstream_circuit_state`). */
export const CIRCUIT_STATE_VALUE: Readonly<Record<CircuitState, number>> = { closed: 0, half_open: 1, open: 2 }

/** A change of state, as it is logged, counted and shared with the other workers. */
export interface CircuitTransition {
  readonly to: CircuitState
  /** What tripped it (`consecutive_failures`, `failure_rate`, `slow`, `half_open_failure`), or what closed it. */
  readonly reason: string
  /** While open: how long this opening lasts and when it ends (ms since the epoch). */
  readonly openMs: number
  readonly until: number
}

/**
 * One target's circuit breaker. Closed, it watches every answer and no-answer failure of the target; a rule that
 * trips opens it: the balancer skips the target for `open_seconds`. Then it is half-open: `half_open_requests` real
 * requests are let through; when all of them succeed it closes, when one fails it opens again for twice as long,
 * up to `max_open_seconds`. Outcomes of requests sent before it opened are ignored once it is open.
 *
 * `allows` is the balancer's check: a comparison of the state while closed. `onTransition` is told every change
 * made here (not those applied from another worker: `applyShared`).
 */
export class CircuitBreaker {
  state: CircuitState = 'closed'
  /** When the current opening ends (ms since the epoch); 0 while closed. */
  openUntil = 0
  private openMs: number
  private consecutive = 0
  private readonly failing: Uint8Array
  private readonly failures: RollingWindow | undefined
  private readonly slowAnswers: RollingWindow | undefined
  private trialsAdmitted = 0
  private trialsSucceeded = 0
  private halfOpenSince = 0
  /** Counts the breaker's periods (each opening, half-open period and closing): see `epoch`. */
  private periods = 0

  constructor (
    readonly settings: CircuitBreakerSettings,
    private readonly onTransition: (transition: CircuitTransition) => void = () => {},
    private readonly now: () => number = Date.now,
  ) {
    this.openMs = settings.open_seconds * 1000
    // A status lookup that costs one array read per answer.
    this.failing = new Uint8Array(600)
    for (const status of settings.failure_statuses) this.failing[status] = 1
    this.failures = settings.failure_rate === undefined ? undefined : new RollingWindow(settings.failure_rate.window_seconds, now)
    this.slowAnswers = settings.slow === undefined ? undefined : new RollingWindow(settings.slow.window_seconds, now)
  }

  /**
   * The breaker's current period, for an attempt to give back with its outcome: in a half-open period only the
   * answers of requests let through in that period are its trials (one sent while it was still closed, answering
   * late, is not).
   */
  get epoch (): number {
    return this.periods
  }

  /** Whether the balancer may pick the target now: closed, or half-open with a trial left. */
  allows (): boolean {
    if (this.state === 'closed') return true
    const now = this.now()
    if (this.state === 'open') {
      if (now < this.openUntil) return false
      this.state = 'half_open'
      this.periods++
      this.trialsAdmitted = 0
      this.trialsSucceeded = 0
      this.halfOpenSince = now
      this.onTransition({ to: 'half_open', reason: 'open_time_over', openMs: this.openMs, until: 0 })
    }
    if (this.trialsAdmitted < this.settings.half_open_requests) return true
    // A trial whose outcome never came (its caller went away first) frees its place after one open period.
    if (now - this.halfOpenSince < this.openMs) return false
    this.trialsAdmitted = this.trialsSucceeded
    this.halfOpenSince = now
    return true
  }

  /** The balancer picked the target: a half-open breaker counts one trial. */
  admit (): void {
    if (this.state === 'half_open') this.trialsAdmitted++
  }

  /** The target answered with `status`, its head `ms` after the attempt started (in the breaker's period `epoch`). */
  recordAnswer (status: number, ms: number, epoch = this.periods): void {
    const failed = this.failing[status] === 1
    const slow = this.settings.slow !== undefined && ms >= this.settings.slow.ms
    if (this.state === 'closed') {
      if (this.slowAnswers !== undefined) {
        this.slowAnswers.add(slow)
        if (this.slowAnswers.trips(this.settings.slow as RateRule)) {
          this.open('slow', this.settings.open_seconds * 1000)
          return
        }
      }
      if (failed) this.closedFailure()
      else this.closedSuccess()
    } else if (this.state === 'half_open' && epoch === this.periods) {
      if (failed || slow) this.reopen()
      else this.trialSucceeded()
    }
  }

  /** The target gave no answer (refused, reset, timeout, tls, protocol). */
  recordFailure (epoch = this.periods): void {
    if (this.state === 'closed') this.closedFailure()
    else if (this.state === 'half_open' && epoch === this.periods) this.reopen()
  }

  /** The state as the next request would find it (an opening whose time is over reads `half_open`); reads only. */
  get currentState (): CircuitState {
    return this.state === 'open' && this.now() >= this.openUntil ? 'half_open' : this.state
  }

  /**
   * Seconds until the breaker may let a request through (at least 1), for `Retry-After`: while open, until its open
   * time is over; while half-open with every trial place taken, until a trial's outcome (or its place freed after
   * one open period). 0 when it lets requests through now.
   */
  retryAfterSeconds (): number {
    if (this.state === 'closed') return 0
    if (this.state === 'open') return Math.max(1, Math.ceil((this.openUntil - this.now()) / 1000))
    if (this.trialsAdmitted < this.settings.half_open_requests) return 0
    return Math.max(1, Math.ceil((this.halfOpenSince + this.openMs - this.now()) / 1000))
  }

  /**
   * A transition another worker made for the same target (breaker-sharing.ts): an opening is applied when it ends
   * later than this breaker's own; a closing closes it. Not told to `onTransition` (the other worker logged it).
   */
  applyShared (transition: CircuitTransition): void {
    if (transition.to === 'open') {
      if (this.state === 'open' && this.openUntil >= transition.until) return
      if (transition.until <= this.now()) return
      this.state = 'open'
      this.periods++
      this.openMs = transition.openMs
      this.openUntil = transition.until
    } else if (transition.to === 'closed' && this.state !== 'closed') {
      this.close()
    }
  }

  private closedFailure (): void {
    this.consecutive++
    const { consecutive_failures: inARow, failure_rate: rate } = this.settings
    if (inARow !== undefined && this.consecutive >= inARow) {
      this.open('consecutive_failures', this.settings.open_seconds * 1000)
      return
    }
    if (this.failures !== undefined) {
      this.failures.add(true)
      if (this.failures.trips(rate as RateRule)) this.open('failure_rate', this.settings.open_seconds * 1000)
    }
  }

  private closedSuccess (): void {
    this.consecutive = 0
    this.failures?.add(false)
  }

  private trialSucceeded (): void {
    this.trialsSucceeded++
    if (this.trialsSucceeded < this.settings.half_open_requests) return
    this.close()
    this.onTransition({ to: 'closed', reason: 'half_open_success', openMs: this.openMs, until: 0 })
  }

  private reopen (): void {
    this.open('half_open_failure', Math.min(this.openMs * 2, this.settings.max_open_seconds * 1000))
  }

  private open (reason: string, ms: number): void {
    this.state = 'open'
    this.periods++
    this.openMs = ms
    this.openUntil = this.now() + ms
    this.onTransition({ to: 'open', reason, openMs: ms, until: this.openUntil })
  }

  private close (): void {
    this.state = 'closed'
    this.periods++
    this.openUntil = 0
    this.openMs = this.settings.open_seconds * 1000
    this.consecutive = 0
    this.failures?.clear()
    this.slowAnswers?.clear()
  }
}
