/** One request counted against a limit. */
export interface CountOutcome {
  /** False once the window's points are used up (this request is the one refused). */
  readonly allowed: boolean
  /** Points left in the window after this request (0 when refused). */
  readonly remaining: number
  /** Milliseconds until the window resets. */
  readonly msBeforeReset: number
}

/**
 * A named rate limit of gateway.yaml's `rate_limits` (`context.limiter(name)`): counts a request under a key. The
 * memory store answers synchronously, a shared store (Redis) with a promise (or mostly synchronously when it
 * pre-counts). Either may throw or reject when the store fails: `onStoreError` says what the gateway's operator
 * chose for that case (`open`: let the request through; `closed`: refuse it).
 */
export interface LimiterHandle {
  count (key: string): CountOutcome | Promise<CountOutcome>
  readonly onStoreError: 'open' | 'closed'
}
