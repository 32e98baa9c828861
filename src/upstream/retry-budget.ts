/** `retry.budget`: how many retries an upstream may send beside its requests. */
export interface RetryBudgetSettings {
  /** Retries allowed as a share of the requests, in percent. */
  readonly percent: number
  /** Retries allowed per second whatever the traffic (so a quiet upstream can still be retried). */
  readonly min_per_second: number
}

/**
 * A token bucket of retries: each request adds `percent / 100` of a retry, each second `min_per_second`; a retry
 * takes one whole. Unused budget is kept up to one second's floor (`min_per_second`, at least one retry), so over
 * any stretch of time retries sent never exceed `percent / 100 × requests + min_per_second × (seconds + 1)`:
 * retries cannot multiply the load on a failing backend, nor does a quiet spell save up a burst of them.
 */
export class RetryBudget {
  private tokens = 0
  private last: number
  private readonly share: number
  private readonly cap: number

  constructor (readonly settings: RetryBudgetSettings, private readonly now: () => number = Date.now) {
    this.share = settings.percent / 100
    this.cap = Math.max(1, settings.min_per_second)
    this.last = now()
  }

  /** A request (not a retry) was sent: it adds its share. */
  request (): void {
    this.tokens = Math.min(this.cap, this.tokens + this.share)
  }

  /** Takes one retry from the budget; false (nothing taken) when there is less than one. */
  spend (): boolean {
    const now = this.now()
    if (now > this.last) {
      this.tokens = Math.min(this.cap, this.tokens + (now - this.last) / 1000 * this.settings.min_per_second)
      this.last = now
    }
    if (this.tokens < 1) return false
    this.tokens -= 1
    return true
  }

  /** Gives back a retry taken for nothing (no target was left to send it to). */
  refund (): void {
    this.tokens = Math.min(this.cap, this.tokens + 1)
  }
}
