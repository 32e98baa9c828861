import type { Answer } from './answer.js'
import { DEFAULT_RETRY_AFTER_SECONDS, backoffMs, retryAfterOf } from './retry-policy.js'

/** The longest wait between two early refresh attempts that the client picks itself (a `Retry-After` may ask longer). */
export const MAX_REFRESH_BACKOFF_MS = 30_000

/**
 * When to try an early token refresh again after one failed while the cached token is still valid, in ms from
 * now; `undefined` means not before the token is due (no more early attempts for this token).
 *
 * - 429 and 503: the token endpoint's `Retry-After` (header, else the body's `retry_after`); a 429 that says
 *   nothing waits the spec's 60 s, a 503 that says nothing backs off like a 5xx;
 * - any other 4xx (`invalid_client`, `invalid_scope`, `unauthorized_client`, a 400): resending the same request
 *   cannot succeed, so no more early attempts: the token is used until it is due and then the failure is thrown;
 * - 5xx, a 200 without a token, no answer: 1 s, 2 s, 4 s, … up to 30 s (`failures` counts consecutive ones, ≥ 1).
 */
export function nextRefreshDelayMs (answer: Answer | undefined, failures: number, now: number): number | undefined {
  const fallback = Math.min(MAX_REFRESH_BACKOFF_MS, backoffMs(failures - 1))
  if (answer === undefined) return fallback
  if (answer.status === 429 || answer.status === 503) {
    const seconds = retryAfterOf(answer, now) ?? (answer.status === 429 ? DEFAULT_RETRY_AFTER_SECONDS : undefined)
    return seconds === undefined ? fallback : seconds * 1000
  }
  if (answer.status >= 400 && answer.status <= 499 && answer.status !== 408) return undefined
  return fallback
}
