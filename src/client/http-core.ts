import { requestIdOf, type Answer } from './answer.js'
import type { Clock } from './clock.js'
import { codeOfAnswer, type LanegateErrorCode } from './error-codes.js'
import { LanegateError } from './errors.js'
import { DEFAULT_RETRY_AFTER_SECONDS, isIdempotent, retryAfterOf, sendWithRetries, type RetryOptions } from './retry-policy.js'
import type { TokenSource } from './token-source.js'

/** Per-call options every typed method accepts. */
export interface CallOptions {
  /** Aborts the request and any wait between attempts; the call rejects with the signal's reason. */
  signal?: AbortSignal
  /** Extra request headers (e.g. `Idempotency-Key`). */
  headers?: Record<string, string>
}

/** One API request, as the typed methods describe it. */
export interface ApiRequest extends CallOptions {
  method: string
  /** Path below the base URL, already percent-encoded, starting with `/`. */
  path: string
  query?: URLSearchParams
  /** Sent as JSON. */
  json?: unknown
  /** Sent as it is (with a `content-type` in `headers`); for the live proxy. */
  body?: string | Uint8Array
  /** The endpoint is idempotent whatever its method (see `isIdempotent`). */
  idempotent?: boolean
  /** The code a bare status means for this endpoint, for envelopes that carry no code (payments). */
  hints?: Partial<Record<number, LanegateErrorCode>>
}

export interface HttpCoreOptions {
  baseUrl: string
  tokens: TokenSource
  fetch: typeof globalThis.fetch
  clock: Clock
  retry: Required<RetryOptions>
  userAgent?: string
}

/**
 * Sends API requests with a bearer token and the spec's client guidance: a 401 gets a new token and one more
 * try; 429, 5xx and network errors are retried by `sendWithRetries`; any other status ≥ 400 is thrown at once
 * as a LanegateError.
 */
export class HttpCore {
  readonly #options: HttpCoreOptions
  readonly #base: string

  constructor (options: HttpCoreOptions) {
    this.#options = options
    this.#base = options.baseUrl.replace(/\/+$/, '')
  }

  /** Sends `request`; resolves with the answer when its status is below 400, else throws. */
  async send (request: ApiRequest): Promise<Answer> {
    const { tokens } = this.#options
    let token = await tokens.getToken(request.signal)
    let answer = await this.#attempt(request, token)
    if (answer.status === 401) {
      const resent = answer.resent
      tokens.invalidate(token)
      token = await tokens.getToken(request.signal)
      answer = await this.#attempt(request, token)
      answer.resent ||= resent
    }
    if (answer.status < 400) return answer
    throw new LanegateError({
      status: answer.status,
      code: codeOfAnswer(answer.status, answer.body, request.hints),
      body: answer.body,
      ...(answer.status === 429 ? { retryAfter: retryAfterOf(answer, this.#options.clock.now()) ?? DEFAULT_RETRY_AFTER_SECONDS } : {}),
      ...requestIdOf(answer.headers),
      method: request.method,
      path: request.path,
      source: 'api',
      resent: answer.resent,
    })
  }

  /** Sends JSON-answering `request` and returns its body. */
  async json<T> (request: ApiRequest): Promise<T> {
    return (await this.send(request)).body as T
  }

  #attempt (request: ApiRequest, token: string): Promise<Answer> {
    const headers = new Headers(request.headers)
    headers.set('authorization', `Bearer ${token}`)
    if (!headers.has('accept')) headers.set('accept', 'application/json')
    if (this.#options.userAgent !== undefined) headers.set('user-agent', this.#options.userAgent)
    let body: string | Uint8Array | undefined = request.body
    if (request.json !== undefined) {
      body = JSON.stringify(request.json)
      headers.set('content-type', 'application/json')
    }
    const query = request.query?.toString() ?? ''
    const url = `${this.#base}${request.path}${query === '' ? '' : `?${query}`}`
    const fetch = this.#options.fetch
    return sendWithRetries((signal) => fetch(url, { method: request.method, headers, ...(body === undefined ? {} : { body: body as BodyInit }), redirect: 'manual', ...(signal === undefined ? {} : { signal }) }), {
      method: request.method,
      path: request.path,
      idempotent: isIdempotent(request.method, headers, request.idempotent),
      settings: this.#options.retry,
      clock: this.#options.clock,
      ...(request.signal === undefined ? {} : { signal: request.signal }),
    })
  }
}
