import type { LaneConfig } from '../../config/types.js'
import { outcomeOfStatus, recordUpstream } from '../../observability/recorders.js'

/** How much of a failing lane's body is kept in `upstream_body` (a lane may answer megabytes of HTML). */
export const UPSTREAM_BODY_LIMIT = 2048

/** A lane failure, shaped like the spec's `upstream_error` envelope; never names the lane's host. */
export interface LaneFailure {
  error: 'upstream_error'
  /** The lane's status; 0 when it never answered (timeout, refused, reset). */
  upstream_status: number
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
  /** The store id the lane belongs to, for `lanegate_upstream_requests_total`. */
  upstream?: string
  /** W3C trace context of the request that made the call (sent as `traceparent`). */
  traceparent?: string
}

/**
 * POSTs JSON to `<lane base_url><path>`. Redirects are not followed (their Location is not ours to reveal), the
 * whole exchange (connect, headers, body) is bounded by `timeoutMs`, and the lane's credential is sent as
 * Authorization. 5xx, 408, 429, timeouts and network failures are retryable; other statuses are final.
 */
export async function callLane (lane: LaneConfig, path: string, body: unknown, options: LaneCallOptions): Promise<LaneCallResult> {
  const signals = [AbortSignal.timeout(options.timeoutMs)]
  if (options.signal !== undefined) signals.push(options.signal)
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' }
  if (lane.credential !== undefined) headers.authorization = lane.credential
  if (options.idempotencyKey !== undefined) headers['idempotency-key'] = options.idempotencyKey
  if (options.traceparent !== undefined) headers.traceparent = options.traceparent
  const started = performance.now()
  const upstream = options.upstream ?? 'lane'

  let response: Response
  let text: string
  try {
    response = await fetch(joinUrl(lane.base_url, path), {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
      redirect: 'manual',
      signal: AbortSignal.any(signals),
    })
    text = await response.text()
  } catch (error) {
    const timedOut = (error as Error).name === 'TimeoutError'
    recordUpstream(upstream, timedOut ? 'timeout' : 'unreachable', (performance.now() - started) / 1000)
    return {
      ok: false,
      retryable: true,
      failure: {
        error: 'upstream_error',
        upstream_status: 0,
        message: timedOut ? 'The lane did not answer in time.' : 'The lane could not be reached.',
        upstream_body: '',
      },
    }
  }

  const status = response.status
  recordUpstream(upstream, outcomeOfStatus(status), (performance.now() - started) / 1000)
  if (status >= 200 && status < 300) {
    const parsed = parseJson(text)
    // A lane that answers 2xx with {ok:false} refused the operation on its own terms.
    if (isObject(parsed) && parsed.ok === false) {
      return { ok: false, retryable: false, failure: failure(status, 'The lane refused the operation.', text) }
    }
    return { ok: true, status, body: parsed ?? text }
  }
  const retryable = status >= 500 || status === 408 || status === 429
  return { ok: false, retryable, failure: failure(status, `The lane answered ${status}.`, text) }
}

function failure (status: number, message: string, body: string): LaneFailure {
  return { error: 'upstream_error', upstream_status: status, message, upstream_body: body.slice(0, UPSTREAM_BODY_LIMIT) }
}

function joinUrl (base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}${path}`
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
