import { GatewayError } from '../../plugin/gateway-error.js'
import { callUpstream } from '../../upstream/call.js'
import type { UpstreamFailureKind } from '../../upstream/failure.js'
import type { UpstreamTrace } from '../../upstream/headers.js'
import type { Upstream } from '../../upstream/upstream.js'

/** How much of a failing lane's body is kept in `upstream_body` (a lane may answer megabytes of HTML). */
export const UPSTREAM_BODY_LIMIT = 2048

/** The largest 2xx body a lane may answer a preview or apply with; a longer one is a failure (`protocol`). */
export const LANE_RESULT_LIMIT = 1048576

/** A lane failure, shaped like the spec's `upstream_error` envelope; never names the lane's host. */
export interface LaneFailure {
  error: 'upstream_error'
  /** The lane's status; 0 when it never answered (timeout, refused, reset). */
  upstream_status: number
  /** Why it never answered (only when `upstream_status` is 0): see UpstreamFailureKind. */
  upstream_failure?: UpstreamFailureKind
  message: string
  upstream_body: string
}

export type LaneCallResult =
  | { ok: true, status: number, body: unknown }
  | { ok: false, retryable: boolean, failure: LaneFailure }

export interface LaneCallOptions {
  timeoutMs: number
  idempotencyKey?: string
  /** Aborts the call when the service closes. */
  signal?: AbortSignal
  /** W3C trace context of the call: the request's (previews), or a delivery run's (sent as `traceparent`). */
  trace?: UpstreamTrace
}

/**
 * POSTs JSON to `<lane base_url><path>` through the lane's upstream (the pool the live relay uses too, so
 * fan-out traffic counts against the lane's `max_sockets`). Redirects are not followed (their Location is not
 * ours to reveal), the whole exchange (connect, headers, body) is bounded by `timeoutMs`, the lane's credential
 * is sent as Authorization, and the answer is read with a bound. 5xx, 408, 429, timeouts and network failures are
 * retryable; other statuses are final. The engine counts the call in `lanegate_upstream_*` under the lane's store id.
 */
export async function callLane (lane: Upstream, path: string, body: unknown, options: LaneCallOptions): Promise<LaneCallResult> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' }
  if (options.idempotencyKey !== undefined) headers['idempotency-key'] = options.idempotencyKey

  let status: number
  let text: string
  try {
    const answer = await callUpstream(lane, {
      method: 'POST',
      path,
      headers,
      body: JSON.stringify(body),
      timeoutMs: options.timeoutMs,
      maxBodyBytes: LANE_RESULT_LIMIT,
      maxErrorBodyBytes: UPSTREAM_BODY_LIMIT,
      signal: options.signal,
      trace: options.trace,
    })
    status = answer.status
    text = answer.body
  } catch (error) {
    if (!(error instanceof GatewayError)) throw error
    const kind = error.fields.upstream_failure as UpstreamFailureKind
    return {
      ok: false,
      // An answer over the size limit would come back the same way: not retried.
      retryable: kind !== 'protocol',
      failure: { error: 'upstream_error', upstream_status: 0, upstream_failure: kind, message: error.message, upstream_body: '' },
    }
  }

  if (status >= 200 && status < 300) {
    const parsed = parseJson(text)
    // A lane that answers 2xx with {ok:false} refused the operation on its own terms.
    if (isObject(parsed) && parsed.ok === false) {
      return { ok: false, retryable: false, failure: failure(status, 'The lane refused the operation.', text.slice(0, UPSTREAM_BODY_LIMIT)) }
    }
    return { ok: true, status, body: parsed ?? text }
  }
  const retryable = status >= 500 || status === 408 || status === 429
  // A 4xx/5xx body is already bounded by the engine (cut at UPSTREAM_BODY_LIMIT bytes, marked " [truncated]").
  return { ok: false, retryable, failure: failure(status, `The lane answered ${status}.`, status >= 400 ? text : text.slice(0, UPSTREAM_BODY_LIMIT)) }
}

function failure (status: number, message: string, body: string): LaneFailure {
  return { error: 'upstream_error', upstream_status: status, message, upstream_body: body }
}

function parseJson (text: string): unknown {
  if (text === '') return undefined
  try {
    return JSON.parse(text) as unknown
  } catch {
    return undefined
  }
}

function isObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
