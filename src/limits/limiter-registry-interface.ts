import type { RateLimiterAbstract } from 'rate-limiter-flexible'
import type { RateLimitConfig } from '../config/types.js'
import type { KeyState, MemoryWindowCounter, RequestCounter } from './request-counter.js'

/** Rate limiters by name; the same name and settings give the same limiter across reloads, so counts survive. */
export interface LimiterRegistry {
  /** A rate-limiter-flexible limiter (the token endpoint's limits, which also read and penalise counts). */
  get (name: string, config: RateLimitConfig): RateLimiterAbstract
  /**
   * The synchronous in-process window behind `get`'s name, when its counts live in this process (memory driver, one
   * process): the token endpoint then counts without a promise. Undefined where counts live elsewhere (Redis, the
   * primary of `server.workers`); `get` serves those. Its counts are apart from `counter`'s, as `get`'s are.
   */
  localWindow? (name: string, config: RateLimitConfig): MemoryWindowCounter | undefined
  /**
   * The counter of a route limit (`rate_limits` in gateway.yaml): synchronous in memory, a promise with Redis
   * (mostly synchronous with `rate_limit_store.sync_interval_ms` > 0: pre-counted, synchronised on a timer).
   * Its names are apart from `get`'s, in memory and in Redis: the same name used by both shares no counts.
   */
  counter (name: string, config: RateLimitConfig): RequestCounter
  /**
   * Per route limit, the keys closest to it now (fewest points left): only counters kept in this process
   * (memory driver, one process) can say; the others are left out.
   */
  closest? (n: number): Array<{ limit: string, keys: KeyState[] }>
  /** Whether a limiter store error lets requests through (`open`) or answers 503 (`closed`). */
  readonly onStoreError: 'open' | 'closed'
}
