import { requestIdOf } from './answer.js'
import { raceAbort, systemClock, type Clock } from './clock.js'
import { codeOfAnswer } from './error-codes.js'
import { LanegateError } from './errors.js'
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
}

interface CachedToken {
  token: string
  /** When to get the next one (ms since the epoch). */
  refreshAt: number
  expiresAt: number
}

/**
 * One client's token cache. `getToken()` answers from the cache until the refresh point, then fetches a new
 * token — once, however many callers ask meanwhile (single flight). `invalidate(token)` drops a token the API
 * refused (401), unless a newer one already replaced it, so a burst of 401s causes one refresh.
 */
export class TokenSource {
  readonly #secret: string
  readonly #options: Omit<TokenSourceOptions, 'clientSecret'>
  readonly #fetch: typeof globalThis.fetch
  readonly #clock: Clock
  readonly #retry: Required<RetryOptions>
  #cached: CachedToken | undefined
  #inflight: Promise<CachedToken> | undefined
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

  /** A token valid for at least the refresh margin (fetched when needed). */
  async getToken (signal?: AbortSignal): Promise<string> {
    const cached = this.#cached
    if (cached !== undefined && this.#clock.now() < cached.refreshAt) return cached.token
    this.#inflight ??= this.#fetchToken().finally(() => { this.#inflight = undefined })
    return (await raceAbort(this.#inflight, signal)).token
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

  async #fetchToken (): Promise<CachedToken> {
    const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: this.#options.clientId, client_secret: this.#secret })
    if (this.#options.scope !== undefined) form.set('scope', this.#options.scope)
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }
    if (this.#options.userAgent !== undefined) headers['user-agent'] = this.#options.userAgent
    const path = new URL(this.#options.tokenUrl).pathname
    // Nobody's AbortSignal stops the shared request: one caller giving up must not fail the others.
    const answer = await sendWithRetries(() => this.#fetch(this.#options.tokenUrl, { method: 'POST', headers, body: form.toString(), redirect: 'error' }), {
      method: 'POST', path, idempotent: true, settings: this.#retry, clock: this.#clock,
    })
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
    this.tokensFetched++
    this.#cached = { token: token.access_token, refreshAt: now + lifeMs - marginMs, expiresAt: now + lifeMs }
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

