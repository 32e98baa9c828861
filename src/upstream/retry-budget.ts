import { RollingWindow } from './rolling-window.js'

/** `retry.budget`: how many retries an upstream may send beside its requests. */
export interface RetryBudgetSettings {
  /** Retries allowed as a share of the requests, in percent. */
  readonly percent: number
  /** Retries allowed per second whatever the traffic (so a quiet upstream can still be retried). */
  readonly min_per_second: number
}

/** Which part of the budget a retry was taken from, to give it back there. */
export type RetryTicket = 'share' | 'floor'

/** How long a request's share of a retry stays spendable. */
export const SHARE_WINDOW_SECONDS = 10

/**
 * Two parts, as Finagle's retry budget: a share — retries sent in the last ten seconds stay within `percent / 100`
 * of the requests sent in them, so a burst of concurrent failures after steady traffic may retry its share at once —
 * and a floor: a token bucket of `min_per_second` a second that keeps at most one second's worth (at least one
 * retry). Over any stretch of time, retries sent stay within `percent / 100 × requests` (of that stretch and the ten
 * seconds before it) `+ min_per_second × (seconds + 1)`: retries cannot multiply the load on a failing backend.
 */
export class RetryBudget {
  /** Requests and share retries of the last ten seconds: `total` counts both, `bad` the share retries. */
  private readonly window: RollingWindow
  private tokens = 0
  private last: number
  private readonly cap: number

  /** `now`: milliseconds on the clock the callers' `request(at)` times are on (performance.now by default). */
  constructor (readonly settings: RetryBudgetSettings, private readonly now: () => number = performance.now.bind(performance)) {
    this.window = new RollingWindow(SHARE_WINDOW_SECONDS, now)
    this.cap = Math.max(1, settings.min_per_second)
    this.last = now()
  }

  /** A request (not a retry) was sent at `at` (the caller's own reading of `now`: no clock read here). */
  request (at: number): void {
    this.window.add(false, at)
  }

  /** Takes one retry from the budget, the share first; undefined (nothing taken) when neither part has one. */
  spend (): RetryTicket | undefined {
    const now = this.now()
    this.window.advanceTo(now)
    const { total, bad } = this.window
    if ((bad + 1) * 100 <= this.settings.percent * (total - bad)) {
      this.window.add(true, now)
      return 'share'
    }
    if (now > this.last) {
      this.tokens = Math.min(this.cap, this.tokens + (now - this.last) / 1000 * this.settings.min_per_second)
      this.last = now
    }
    if (this.tokens < 1) return undefined
    this.tokens -= 1
    return 'floor'
  }

  /** Gives back a retry taken for nothing (no target was left to send it to). */
  refund (ticket: RetryTicket): void {
    if (ticket === 'share') this.window.remove(true)
    else this.tokens = Math.min(this.cap, this.tokens + 1)
  }
}
