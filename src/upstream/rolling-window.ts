/**
 * Counts of events and of "bad" ones (failures, slow answers) over the last `seconds` seconds, in one bucket per
 * second with running sums: adding costs O(1) (buckets that fell out of the window are cleared as time moves on,
 * each once). A circuit breaker's `failure_rate` and `slow` rules read it.
 */
export class RollingWindow {
  private readonly totals: Uint32Array
  private readonly bads: Uint32Array
  /** Events, and bad ones, in the window as of the last `advanceTo` (or add). */
  total = 0
  bad = 0
  /** The second (on the window's clock) the newest bucket belongs to. */
  private second = 0

  constructor (private readonly seconds: number, private readonly now: () => number = Date.now) {
    this.totals = new Uint32Array(seconds)
    this.bads = new Uint32Array(seconds)
  }

  /** Counts an event at `at` (the window's clock; read from it when not given). */
  add (bad: boolean, at = this.now()): void {
    this.advanceTo(at)
    const i = this.second % this.seconds
    this.totals[i] = (this.totals[i] as number) + 1
    this.total++
    if (bad) {
      this.bads[i] = (this.bads[i] as number) + 1
      this.bad++
    }
  }

  /** Takes back an event added in this second (a retry given back); nothing when its second has passed. */
  remove (bad: boolean): void {
    this.advanceTo(this.now())
    const i = this.second % this.seconds
    if (this.totals[i] === 0 || (bad && this.bads[i] === 0)) return
    this.totals[i] = (this.totals[i] as number) - 1
    this.total--
    if (bad) {
      this.bads[i] = (this.bads[i] as number) - 1
      this.bad--
    }
  }

  /** Whether at least `min_requests` events were counted and `percent` % or more of them were bad. */
  trips (rule: { readonly percent: number, readonly min_requests: number }): boolean {
    return this.total >= rule.min_requests && this.bad * 100 >= rule.percent * this.total
  }

  /** Events and bad ones in the window now (for tests and the console). */
  counts (): { total: number, bad: number } {
    this.advanceTo(this.now())
    return { total: this.total, bad: this.bad }
  }

  clear (): void {
    this.totals.fill(0)
    this.bads.fill(0)
    this.total = 0
    this.bad = 0
  }

  /** Moves to the second of `at`, clearing the buckets of the seconds that passed since the last event. */
  advanceTo (at: number): void {
    const second = Math.floor(at / 1000)
    if (second <= this.second) return
    const steps = Math.min(second - this.second, this.seconds)
    for (let s = 1; s <= steps; s++) {
      const i = (this.second + s) % this.seconds
      this.total -= this.totals[i] as number
      this.bad -= this.bads[i] as number
      this.totals[i] = 0
      this.bads[i] = 0
    }
    this.second = second
  }
}
