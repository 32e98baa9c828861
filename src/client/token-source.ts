import { requestIdOf, type Answer } from './answer.js'
import { raceAbort, systemClock, type Clock } from './clock.js'
import { codeOfAnswer } from './error-codes.js'
import { LanegateError, type LanegateNetworkError } from './errors.js'
import { nextRefreshDelayMs } from './refresh-backoff.js'
import { DEFAULT_RETRY_AFTER_SECONDS, retryAfterOf, retrySettings, sendWithRetries, type RetryOptions } from './retry-policy.js'

/** How a TokenSource obtains client-credentials tokens. */
export interface TokenSourceOptions {
  /** The token endpoint, e.g. `https://gateway.example/oauth/token`. */
  tokenUrl: string
  clientId: string
  /** Kept in a private field: never in an error, a property, JSON or `util.inspect` output. */
  clientSecret: string
  /** Space-separated scopes to ask for (default: every scope the client may have). */
  scope?: string
  /**
   * Refresh when fewer than this many seconds of the token's life remain (default 300, the spec's "within 5
   * minutes"). A token that lives no longer than this is refreshed at half its life instead.
   */
  refreshBeforeSeconds?: number
  /** Retries of the token request itself (429, 5xx, network), as for API calls. */
  retry?: RetryOptions
  fetch?: typeof globalThis.fetch
  clock?: Clock
  userAgent?: string
  /**
   * Called when an early refresh fails while the cached token is still valid: the call that triggered it goes on
   * with the cached token, so this is the only place the failure shows. Errors it throws are ignored.
   */
  onTokenRefreshError?: (error: LanegateError | LanegateNetworkError, detail: TokenRefreshFailure) => void
}

/** What `onTokenRefreshError` is told besides the error. */
export interface TokenRefreshFailure {
  /** When the cached token, still in use, expires (ms since the epoch). */
  expiresAt: number
  /**
   * When the next early attempt may be made (ms since the epoch); `undefined` when none will be (a 4xx such as
   * `invalid_client`): the token is then used until it is due, and the token request made then throws.
   */
  nextAttemptAt: number | undefined
  /** Early refreshes that failed in a row for this token, this one included. */
  failures: number
}

interface CachedToken {
  token: string
  /** When to get the next one (ms since the epoch). */
  refreshAt: number
  /** Until when the token may still be sent while a refresh fails (its expiry less a safety margin). */
  usableUntil: number
  expiresAt: number
}

/**
 * How long before its expiry a token stops being sent while refreshes fail (at most; a short-lived token gets half
 * its refresh margin): a token that expires on its way to the gateway would be refused with a 401.
 */
export const EXPIRY_SAFETY_MS = 10_000

/**
 * One client's token cache. `getToken()` answers from the cache until the refresh point. Between the refresh
 * point and the token's expiry (less `EXPIRY_SAFETY_MS`) it still answers with the cached token at once and
 * refreshes in the background: one attempt, single flight; a failure is reported to `onTokenRefreshError` and the
 * next attempt waits (1 s, 2 s, … up to 30 s, or the endpoint's `Retry-After`; never after a 4xx such as
 * `invalid_client`). Once the token is past that point (or there is none) callers wait for a new token — once,
 * however many ask meanwhile — fetched with the usual retries, and a failure is thrown. `invalidate(token)` drops
 * a token the API refused (401), unless a newer one already replaced it, so a burst of 401s causes one refresh.
 */
export class TokenSource {
  readonly #secret: string
  readonly #options: Omit<TokenSourceOptions, 'clientSecret'>
  readonly #fetch: typeof globalThis.fetch
  readonly #clock: Clock
  readonly #retry: Required<RetryOptions>
  #cached: CachedToken | undefined
  /** A token fetch callers wait for (no usable token), with the usual retries. */
  #inflight: Promise<CachedToken> | undefined
  /** An early refresh under way (one attempt; resolves undefined when it failed; never rejects). */
  #early: Promise<CachedToken | undefined> | undefined
  /** No early refresh before this (ms since the epoch): the back-off after a failed one. */
  #nextEarlyAt = 0
  #earlyFailures = 0
  /** Tokens obtained so far. */
  tokensFetched = 0

  constructor (options: TokenSourceOptions) {
    const { clientSecret, ...rest } = options
    if (typeof clientSecret !== 'string' || clientSecret === '') throw new TypeError('clientSecret is required')
    if (typeof rest.clientId !== 'string' || rest.clientId === '') throw new TypeError('clientId is required')
    this.#secret = clientSecret
    this.#options = rest
    this.#fetch = options.fetch ?? globalThis.fetch
    this.#clock = options.clock ?? systemClock
    this.#retry = retrySettings(options.retry)
  }

  /**
   * A token to send: the cached one while it is not due or still safely valid (starting a background refresh
   * when due), else a new one (thrown: the token endpoint's LanegateError or a LanegateNetworkError).
   */
  async getToken (signal?: AbortSignal): Promise<string> {
    const cached = this.#cached
    const now = this.#clock.now()
    if (cached !== undefined && now < cached.refreshAt) return cached.token
    if (cached !== undefined && now < cached.usableUntil) {
      this.#refreshEarly(cached, now)
      return cached.token
    }
    return (await raceAbort(this.#required(), signal)).token
  }

  /**
   * Fetches a new token now, whatever the cache holds (joining a fetch under way), with the usual retries; throws
   * when it fails. For callers that schedule refreshes themselves (`lanegate loadtest`).
   */
  async refresh (signal?: AbortSignal): Promise<string> {
    return (await raceAbort(this.#required(), signal)).token
  }

  /** Resolves when no token request is under way (tests; before closing the process). Never rejects. */
  async settled (): Promise<void> {
    await Promise.allSettled([this.#early, this.#inflight])
  }

  /** Forgets `token` if it is still the cached one (the API answered 401 to it). */
  invalidate (token: string): void {
    if (this.#cached?.token === token) this.#cached = undefined
  }

  /** When the cached token is due for refresh (ms since the epoch), if there is one. */
  refreshAt (): number | undefined {
    return this.#cached?.refreshAt
  }

  /** The cached token, without fetching (undefined before the first). */
  peek (): string | undefined {
    return this.#cached?.token
  }

  /** The token fetch every caller without a usable token waits for (single flight). */
  #required (): Promise<CachedToken> {
    this.#inflight ??= this.#fetchRequired().finally(() => { this.#inflight = undefined })
    return this.#inflight
  }

  async #fetchRequired (): Promise<CachedToken> {
    // An early refresh under way is the one token request: wait for it, and use its token unless it failed or
    // the API refused that token meanwhile (invalidate).
    const early = this.#early
    if (early !== undefined) {
      const fresh = await early
      if (fresh !== undefined && fresh === this.#cached) return fresh
    }
    return this.#accept(await this.#request(this.#retry))
  }

  /** Starts one background refresh attempt unless one is under way, a fetch is, or the back-off says wait. */
  #refreshEarly (cached: CachedToken, now: number): void {
    if (this.#early !== undefined || this.#inflight !== undefined || now < this.#nextEarlyAt) return
    this.#early = this.#attemptEarly(cached).finally(() => { this.#early = undefined })
  }

  async #attemptEarly (cached: CachedToken): Promise<CachedToken | undefined> {
    let answer: Answer | undefined
    try {
      // One attempt: the back-off between early attempts replaces the retries of a token request.
      answer = await this.#request({ ...this.#retry, maxAttempts: 1 })
      const fresh = this.#accept(answer)
      this.#earlyFailures = 0
      this.#nextEarlyAt = 0
      return fresh
    } catch (error) {
      const now = this.#clock.now()
      const failures = ++this.#earlyFailures
      const delayMs = nextRefreshDelayMs(answer, failures, now)
      const nextAttemptAt = delayMs === undefined ? undefined : now + delayMs
      this.#nextEarlyAt = nextAttemptAt ?? Number.POSITIVE_INFINITY
      this.#report(error as LanegateError | LanegateNetworkError, { expiresAt: cached.expiresAt, nextAttemptAt, failures })
      return undefined
    }
  }

  #report (error: LanegateError | LanegateNetworkError, detail: TokenRefreshFailure): void {
    try {
      this.#options.onTokenRefreshError?.(error, detail)
    } catch {
      // A broken hook must not turn a call that has a valid token into a failure (it runs in the background).
    }
  }

  /** Sends the token request; resolves with the answer read, whatever its status; throws LanegateNetworkError. */
  async #request (settings: Required<RetryOptions>): Promise<Answer> {
    const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: this.#options.clientId, client_secret: this.#secret })
    if (this.#options.scope !== undefined) form.set('scope', this.#options.scope)
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }
    if (this.#options.userAgent !== undefined) headers['user-agent'] = this.#options.userAgent
    // Nobody's AbortSignal stops the shared request: one caller giving up must not fail the others.
    return await sendWithRetries(() => this.#fetch(this.#options.tokenUrl, { method: 'POST', headers, body: form.toString(), redirect: 'error' }), {
      method: 'POST', path: this.#tokenPath(), idempotent: true, settings, clock: this.#clock,
    })
  }

  #tokenPath (): string {
    return new URL(this.#options.tokenUrl).pathname
  }

  /** Caches the token `answer` carries, or throws the token endpoint's error as a LanegateError. */
  #accept (answer: Answer): CachedToken {
    const path = this.#tokenPath()
    const token = typeof answer.body === 'object' && answer.body !== null ? answer.body as Record<string, unknown> : {}
    if (answer.status !== 200 || typeof token.access_token !== 'string' || typeof token.expires_in !== 'number') {
      const body = this.#scrub(answer.body)
      throw new LanegateError({
        status: answer.status,
        // A 200 without a token is the endpoint failing.
        code: answer.status === 200 ? 'server_error' : codeOfAnswer(answer.status, body),
        body,
        ...(answer.status === 429 ? { retryAfter: retryAfterOf(answer, this.#clock.now()) ?? DEFAULT_RETRY_AFTER_SECONDS } : {}),
        ...requestIdOf(answer.headers),
        method: 'POST',
        path,
        source: 'token',
      })
    }
    const now = this.#clock.now()
    const lifeMs = token.expires_in * 1000
    const wantedMarginMs = (this.#options.refreshBeforeSeconds ?? 300) * 1000
    const marginMs = wantedMarginMs < lifeMs ? wantedMarginMs : lifeMs / 2
    const safetyMs = Math.min(EXPIRY_SAFETY_MS, marginMs / 2)
    this.tokensFetched++
    this.#earlyFailures = 0
    this.#nextEarlyAt = 0
    this.#cached = { token: token.access_token, refreshAt: now + lifeMs - marginMs, usableUntil: now + lifeMs - safetyMs, expiresAt: now + lifeMs }
    return this.#cached
  }

  /** A token endpoint that echoed the secret (none should) must not put it into an error. */
  #scrub (body: unknown): unknown {
    const text = typeof body === 'string' ? body : JSON.stringify(body)
    if (text === undefined || !text.includes(this.#secret)) return body
    if (typeof body === 'string') return body.replaceAll(this.#secret, '[redacted]')
    try {
      return JSON.parse(text.replaceAll(this.#secret, '[redacted]')) as unknown
    } catch {
      return '[a body that contained the client secret]'
    }
  }
}

