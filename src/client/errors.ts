import type { LanegateErrorCode } from './error-codes.js'

/** Where an error answer came from. */
export type LanegateErrorSource = 'api' | 'token'

/** What a LanegateError is built from. */
export interface LanegateErrorInit {
  status: number
  code: LanegateErrorCode
  /** The parsed JSON body, or the text when it was not JSON. */
  body: unknown
  /** Seconds the gateway asked to wait (429), when it said. */
  retryAfter?: number
  /** The gateway's `X-Request-Id`, for support requests and log searches. */
  requestId?: string
  method: string
  /** The URL path called (no query string, no host: nothing sensitive). */
  path: string
  source: LanegateErrorSource
  /** The call was resent after a 5xx or no answer, so an earlier attempt may have taken effect (see Answer). */
  resent?: boolean
}

/**
 * An error answer from the gateway (or its token endpoint). `status` is the HTTP status and always the truth;
 * `code` is the catalogue code the body names (see `codeOfAnswer` for how each envelope is read). Never carries
 * the client secret or a token: only the status, the code, the body the gateway sent, and the path.
 */
export class LanegateError extends Error {
  override readonly name = 'LanegateError'
  readonly status: number
  readonly code: LanegateErrorCode
  readonly body: unknown
  readonly retryAfter: number | undefined
  readonly requestId: string | undefined
  readonly method: string
  readonly path: string
  readonly source: LanegateErrorSource
  readonly resent: boolean

  constructor (init: LanegateErrorInit) {
    const where = init.source === 'token' ? 'the token endpoint' : `${init.method} ${init.path}`
    const wait = init.retryAfter === undefined ? '' : ` (retry after ${init.retryAfter} s)`
    super(`${where} answered ${init.status} ${init.code}${describe(init.body)}${wait}`)
    this.status = init.status
    this.code = init.code
    this.body = init.body
    this.retryAfter = init.retryAfter
    this.requestId = init.requestId
    this.method = init.method
    this.path = init.path
    this.source = init.source
    this.resent = init.resent ?? false
  }

  toJSON (): Record<string, unknown> {
    return { name: this.name, message: this.message, status: this.status, code: this.code, body: this.body, retryAfter: this.retryAfter, requestId: this.requestId, method: this.method, path: this.path, source: this.source, resent: this.resent }
  }
}

/** The gateway's human message, when the body has one. */
function describe (body: unknown): string {
  if (typeof body !== 'object' || body === null) return ''
  const record = body as Record<string, unknown>
  const text = [record.error_description, record.message, record.error].find((v): v is string => typeof v === 'string')
  return text === undefined ? '' : `: ${text}`
}

/** The gateway could not be reached (or the connection broke) on every attempt allowed. */
export class LanegateNetworkError extends Error {
  override readonly name = 'LanegateNetworkError'
  constructor (readonly method: string, readonly path: string, readonly attempts: number, cause: unknown) {
    super(`${method} ${path}: no answer after ${attempts === 1 ? '1 attempt' : `${attempts} attempts`}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause })
  }
}

/**
 * Whether `error` is a LanegateError, optionally with the given code; narrows `code` to it.
 *
 * ```ts
 * if (isLanegateError(err, 'fanout_not_previewed')) console.log(err.code) // 'fanout_not_previewed'
 * ```
 */
export function isLanegateError<C extends LanegateErrorCode> (error: unknown, code?: C): error is LanegateError & { readonly code: C } {
  return error instanceof LanegateError && (code === undefined || error.code === code)
}
