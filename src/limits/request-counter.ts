import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible'

import type { CountOutcome } from '../plugin/limiter.js'

/** One request counted against a limit (declared by the contract: `context.limiter` hands it to policies). */
export type { CountOutcome }

/** One key's window of a limit, as the console lists it. */
export interface KeyState {
  readonly key: string
  /** Requests counted in the window (refused ones included). */
  readonly used: number
  readonly remaining: number
  readonly msBeforeReset: number
}

/**
 * Counts requests against one named limit. The memory counter answers synchronously, so a route whose limits are
 * all in memory runs its chain without a promise; a shared store (Redis) answers with a promise, or mostly
 * synchronously when it pre-counts (SyncedWindowCounter). Either may throw or reject when the store fails,
 * which the caller maps to `on_store_error`.
 */
export interface RequestCounter {
  count (key: string): CountOutcome | Promise<CountOutcome>
}

/**
 * A fixed window per key, in this process, with the same semantics as rate-limiter-flexible's RateLimiterMemory
 * (the window opens at a key's first request and lasts `windowSeconds`), but synchronous: that library's memory
 * limiter answers every request with a promise and arms a timer per key. Expired keys are swept at most once per
 * window, so memory stays bounded by the keys seen in about two windows.
 */
export class MemoryWindowCounter implements RequestCounter {
  readonly points: number
  readonly #windowMs: number
  readonly #windows = new Map<string, { used: number, resetAt: number }>()
  #nextSweepAt: number

  constructor (points: number, windowSeconds: number, private readonly now: () => number = Date.now) {
    this.points = points
    this.#windowMs = windowSeconds * 1000
    this.#nextSweepAt = now() + this.#windowMs
  }

  count (key: string): CountOutcome {
    const now = this.now()
    const window = this.#window(key, now)
    window.used++
    const allowed = window.used <= this.points
    return { allowed, remaining: allowed ? this.points - window.used : 0, msBeforeReset: window.resetAt - now }
  }

  /**
   * Adds `points` requests admitted elsewhere (a worker's pre-count, SyncedWindowCounter) to the key's window,
   * opening it when there is none, and answers the window's count and the milliseconds left in it: what
   * RateLimiterRedis's script answers, so a pre-counting worker reads the primary as it reads Redis.
   */
  add (key: string, points: number): [consumed: number, msLeft: number] {
    const now = this.now()
    const window = this.#window(key, now)
    window.used += points
    return [window.used, window.resetAt - now]
  }

  /** The key's window as it stands, without counting; undefined when none is open (what RateLimiterMemory's `get` tells). */
  peek (key: string): { used: number, msBeforeReset: number } | undefined {
    const now = this.now()
    const window = this.#windows.get(key)
    if (window === undefined || window.resetAt <= now) return undefined
    return { used: window.used, msBeforeReset: window.resetAt - now }
  }

  #window (key: string, now: number): { used: number, resetAt: number } {
    if (now >= this.#nextSweepAt) this.#sweep(now)
    let window = this.#windows.get(key)
    if (window === undefined || window.resetAt <= now) {
      window = { used: 0, resetAt: now + this.#windowMs }
      this.#windows.set(key, window)
    }
    return window
  }

  /**
   * The `n` keys with the fewest points left in a window still open, fewest first (the console asks; a scan of
   * this counter's windows, never done per request).
   */
  closest (n: number): KeyState[] {
    const now = this.now()
    const open: KeyState[] = []
    for (const [key, window] of this.#windows) {
      if (window.resetAt > now) open.push({ key, used: window.used, remaining: Math.max(0, this.points - window.used), msBeforeReset: window.resetAt - now })
    }
    return open.sort((a, b) => a.remaining - b.remaining || a.msBeforeReset - b.msBeforeReset).slice(0, n)
  }

  /** Keys currently holding a window (for tests and the memory bound). */
  get size (): number {
    return this.#windows.size
  }

  #sweep (now: number): void {
    for (const [key, window] of this.#windows) {
      if (window.resetAt <= now) this.#windows.delete(key)
    }
    this.#nextSweepAt = now + this.#windowMs
  }
}

/** A shared-store limiter (Redis) as a RequestCounter: its 429 rejection becomes `allowed: false`. */
export class StoreCounter implements RequestCounter {
  constructor (private readonly limiter: RateLimiterAbstract) {}

  count (key: string): Promise<CountOutcome> {
    return this.limiter.consume(key).then(
      (res) => ({ allowed: true, remaining: res.remainingPoints, msBeforeReset: res.msBeforeNext }),
      (rejection: unknown) => {
        if (rejection instanceof RateLimiterRes) return { allowed: false, remaining: 0, msBeforeReset: rejection.msBeforeNext }
        throw rejection
      },
    )
  }
}
