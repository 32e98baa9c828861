import { readAnswer, type Answer } from './answer.js'
import type { Clock } from './clock.js'
import { LanegateNetworkError } from './errors.js'

/** How hard the client retries (see `sendWithRetries`). */
export interface RetryOptions {
  /** Attempts in all, the first included (default 4: the first, then after 1 s, 2 s and 4 s). */
  maxAttempts?: number
  /**
   * The longest a 429 may ask the client to wait (default 60 000 ms, the spec's default `Retry-After`). A longer
   * `Retry-After` is thrown at once as a LanegateError with `retryAfter` set, for the caller to schedule.
   */
  maxWaitMs?: number
}

/** The spec's default wait when a 429 says nothing. */
export const DEFAULT_RETRY_AFTER_SECONDS = 60

export function retrySettings (options: RetryOptions = {}): Required<RetryOptions> {
  const maxAttempts = options.maxAttempts ?? 4
  const maxWaitMs = options.maxWaitMs ?? 60_000
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1) throw new TypeError('retry.maxAttempts must be an integer ≥ 1')
  if (!(maxWaitMs >= 0)) throw new TypeError('retry.maxWaitMs must be ≥ 0')
  return { maxAttempts, maxWaitMs }
}

/** The wait before the n-th retry (0-based) after a 5xx or a network error: 1 s, 2 s, 4 s, … */
export function backoffMs (retryIndex: number): number {
  return 1000 * 2 ** retryIndex
}

/**
 * Seconds a 429 asks to wait: the `Retry-After` header (delta-seconds or an HTTP date), else the body's
 * `retry_after`, else undefined (the caller applies the 60 s default).
 */
export function retryAfterOf (answer: Answer, now: number): number | undefined {
  const header = answer.headers.get('retry-after')
  if (header !== null) {
    const trimmed = header.trim()
    if (/^\d+$/.test(trimmed)) return Number(trimmed)
    const date = Date.parse(trimmed)
    if (!Number.isNaN(date)) return Math.max(0, Math.ceil((date - now) / 1000))
  }
  const body = answer.body
  if (typeof body === 'object' && body !== null) {
    const value = (body as Record<string, unknown>).retry_after
    if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return value
  }
  return undefined
}

/** One request, as `sendWithRetries` needs it. */
export interface RetryContext {
  method: string
  path: string
  /** Whether resending after a 5xx or a lost connection is safe (see `isIdempotent`). */
  idempotent: boolean
  settings: Required<RetryOptions>
  clock: Clock
  signal?: AbortSignal
}

/**
 * Sends a request until the spec's client guidance says stop, and returns the last answer read:
 * - 429: waits `Retry-After` (header, else body `retry_after`, else 60 s) and resends, for any method (a
 *   rate-limited request was not processed), when the wait fits `maxWaitMs`; otherwise returns the 429 at once;
 * - 5xx and network errors: resends after 1 s, 2 s, 4 s, … only when the request is idempotent;
 * - anything else is returned as it is (the caller throws on ≥ 400).
 * Every resend counts against `maxAttempts`. A network error on the last attempt throws LanegateNetworkError;
 * an abort throws the signal's reason at once, during a request or a wait.
 */
export async function sendWithRetries (send: (signal: AbortSignal | undefined) => Promise<Response>, context: RetryContext): Promise<Answer> {
  const { clock, signal, settings } = context
  let backoffs = 0
  for (let attempt = 1; ; attempt++) {
    let answer: Answer
    try {
      answer = await readAnswer(await send(signal))
      answer.resent = backoffs > 0
    } catch (error) {
      if (signal?.aborted === true) throw signal.reason
      if (!context.idempotent || attempt >= settings.maxAttempts) throw new LanegateNetworkError(context.method, context.path, attempt, error)
      await clock.sleep(backoffMs(backoffs++), signal)
      continue
    }
    if (attempt >= settings.maxAttempts) return answer
    if (answer.status === 429) {
      const waitMs = (retryAfterOf(answer, clock.now()) ?? DEFAULT_RETRY_AFTER_SECONDS) * 1000
      if (waitMs > settings.maxWaitMs) return answer
      await clock.sleep(waitMs, signal)
      continue
    }
    if (answer.status >= 500 && answer.status <= 599 && context.idempotent) {
      await clock.sleep(backoffMs(backoffs++), signal)
      continue
    }
    return answer
  }
}

const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE'])

/**
 * Whether a request may be resent after a 5xx or a lost connection: the HTTP-idempotent methods, a request that
 * carries an `Idempotency-Key` (the gateway replays the first answer), or one the endpoint makes idempotent
 * (`declared`: a fan-out commit is idempotent by its dispatch id; reports and host-file authoring change no state).
 */
export function isIdempotent (method: string, headers: Headers, declared: boolean | undefined): boolean {
  return declared === true || IDEMPOTENT_METHODS.has(method) || headers.has('idempotency-key')
}
