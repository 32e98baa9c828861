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
}

/**
 * The one error type handlers and policies throw. It names a catalogued code; the route's envelope decides the
 * body. Nothing else about it reaches the client: `cause` is only logged.
 */
export class GatewayError extends Error {
  readonly code: ErrorCode
  readonly status: number
  readonly fields: ErrorFields
  readonly headers: Record<string, string>

  constructor (code: ErrorCode, options: GatewayErrorOptions = {}) {
    // A 4xx is the caller's outcome, not a fault: its stack is never logged (the error handler logs a 4xx by code
    // and status), and capturing one was the 429 path's largest single cost under a flood (≈ 15 % of its busy
    // samples in a profile). A 5xx keeps its stack for the error log.
    // An upstream's failure (catalogue `upstream`) is logged without a stack, so none is captured either.
    const limit = Error.stackTraceLimit
    const entry: CatalogueEntry = catalogue[code]
    if (entry.status < 500 || entry.upstream === true) Error.stackTraceLimit = 0
    try {
      super(options.message ?? catalogue[code].message, options.cause === undefined ? undefined : { cause: options.cause })
    } finally {
      Error.stackTraceLimit = limit
    }
    this.name = 'GatewayError'
    this.code = code
    this.status = catalogue[code].status
    this.fields = options.fields ?? {}
    this.headers = options.headers ?? {}
  }

  /** Same code and message, status overridden (upstream_error mirrors the lane's status). */
  withStatus (status: number): GatewayError {
    const copy = new GatewayError(this.code, { message: this.message, fields: this.fields, headers: this.headers })
    ;(copy as { status: number }).status = status
    return copy
  }
}

export function gatewayError (code: ErrorCode, options?: GatewayErrorOptions): GatewayError {
  return new GatewayError(code, options)
}
