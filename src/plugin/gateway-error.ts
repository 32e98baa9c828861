import { catalogue, type CatalogueEntry, type ErrorCode } from './catalogue.js'

/** Extra body fields an error carries (e.g. `retry_after`, `store_org_id`, `errors`). */
export type ErrorFields = Record<string, unknown>

export interface GatewayErrorOptions {
  /** Human message; defaults to the catalogue's. */
  message?: string
  /** Extra body fields, rendered by the envelope. */
  fields?: ErrorFields
  /** Response headers to set with the error (e.g. `WWW-Authenticate`, `Retry-After`). */
  headers?: Record<string, string>
  /** The underlying error, logged but never rendered. */
  cause?: unknown
  /** The named rate limit that refused the request (a metrics label; never rendered). */
  limit?: string
}

/**
 * The one error type handlers and policies throw. It names a catalogued code; the route's envelope decides the
 * body. Nothing else about it reaches the client: `cause` is only logged.
 */
export class GatewayError extends Error {
  /** A catalogued code, or a code an outside policy declared in its own `errors` map (see `declaredError`). */
  readonly code: ErrorCode | DeclaredCode
  readonly status: number
  readonly fields: ErrorFields
  readonly headers: Record<string, string>
  /** The code's entry: the catalogue's, or the declaring policy's (`shape: 'code'`). Envelopes render from it. */
  readonly entry: CatalogueEntry
  /** The named rate limit that refused the request, for `lanegate_rate_limited_total` (never rendered). */
  readonly limit: string | undefined

  /** `entry` is the catalogue's unless `declaredError` passes a policy's own; callers never pass it. */
  constructor (code: ErrorCode, options: GatewayErrorOptions = {}, entry: CatalogueEntry = catalogue[code]) {
    // A 4xx is the caller's outcome, not a fault: its stack is never logged (the error handler logs a 4xx by code
    // and status), and capturing one was the 429 path's largest single cost under a flood (≈ 15 % of its busy
    // samples in a profile). A 5xx keeps its stack for the error log.
    // An upstream's failure (catalogue `upstream`) is logged without a stack, so none is captured either.
    const limit = Error.stackTraceLimit
    if (entry.status < 500 || entry.upstream === true) Error.stackTraceLimit = 0
    try {
      super(options.message ?? entry.message, options.cause === undefined ? undefined : { cause: options.cause })
    } finally {
      Error.stackTraceLimit = limit
    }
    this.name = 'GatewayError'
    this.code = code
    this.status = entry.status
    this.fields = options.fields ?? {}
    this.headers = options.headers ?? {}
    this.entry = entry
    this.limit = options.limit
  }

  /** Same code and message, status overridden (upstream_error mirrors the lane's status). */
  withStatus (status: number): GatewayError {
    const copy = new GatewayError(this.code as ErrorCode, { message: this.message, fields: this.fields, headers: this.headers }, this.entry)
    ;(copy as { status: number }).status = status
    return copy
  }
}

/**
 * A code that is not in the catalogue but in an outside policy's `errors` map. The pipeline checks at load that
 * it clashes with no catalogued code and no other policy's code, so within one running gateway a code still
 * names exactly one status and message.
 */
export type DeclaredCode = string & { readonly declaredByPolicy?: true }

/**
 * The refusal for a code a policy declared in its own `errors` map: rendered by every envelope like a catalogued
 * `code`-shaped error (`{error: <code>, ...fields, message}` in plain/exchange, `{success:false, message}` in
 * payments, `{error: <code>, error_description}` in oauth).
 */
export function declaredError (code: DeclaredCode, entry: CatalogueEntry, options?: GatewayErrorOptions): GatewayError {
  return new GatewayError(code as ErrorCode, options, entry)
}

/**
 * Not an error: a policy's complete answer to a request (a CORS preflight's 204 and its `Access-Control-*`
 * headers; a small body when the policy gives one, at most the response phase's limit). A step returns it like a refusal, so it costs passing steps nothing; the chain
 * sends it as the route's reply (send-policy-answer.ts), unlogged, in no envelope.
 */
export class PolicyAnswer extends GatewayError {
  constructor (status: number, headers: Record<string, string>, readonly body?: string | Buffer) {
    super('bad_request', { headers }, { status, message: 'answered by a policy', shape: 'code' })
    this.name = 'PolicyAnswer'
  }
}

export function gatewayError (code: ErrorCode, options?: GatewayErrorOptions): GatewayError {
  return new GatewayError(code, options)
}
