import { GatewayError } from '../../errors/gateway-error.js'
import { outcomeOfStatus, recordUpstream } from '../../observability/recorders.js'

/** The `upstream` label of calls to the stream materialization service. */
const CS_UPSTREAM = 'timeseries'
import type { TimeseriesSettings } from './settings.js'

export const GRANULARITIES = ['hour', 'day', 'week', 'month'] as const
export type Granularity = typeof GRANULARITIES[number]

/**
 * The stream materialization protocol (docs/data-exchange.md): `POST {base_url}/query` with this JSON body.
 * `from` is inclusive and `to` exclusive, both RFC 3339 UTC; buckets start at UTC hour/day/Monday/1st.
 */
export interface CsQuery {
  metric: string
  stores: string[]
  from: string
  to: string
  granularity: Granularity
  /** Splits each store's series by a dimension (`department`). */
  group_by?: 'department'
}

export interface CsPoint {
  ts: string
  value: number
}

/** One series of the answer `{series: CsSeries[]}`. */
export interface CsSeries {
  store_org_id: string
  department?: string
  points: CsPoint[]
}

/**
 * Runs one query. Failures are `cs_query_failed`: 422 when the service answered 4xx (the query was refused),
 * 502 when it answered 5xx, a malformed body, or nothing in time (`cs_status` 0). `cs_body` quotes at most
 * `max_error_body_bytes` of its answer; the service's address is never in the message. `traceparent` is the
 * calling request's trace (observability/trace-context.ts); each call counts as upstream `timeseries`.
 */
export async function queryCs (settings: TimeseriesSettings, query: CsQuery, traceparent?: string): Promise<CsSeries[]> {
  let response: Response
  let text: string
  const started = performance.now()
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' }
  if (traceparent !== undefined) headers.traceparent = traceparent
  try {
    response = await fetch(new URL('query', settings.base_url.endsWith('/') ? settings.base_url : `${settings.base_url}/`), {
      method: 'POST',
      headers,
      body: JSON.stringify(query),
      redirect: 'manual',
      signal: AbortSignal.timeout(settings.timeout_ms),
    })
    text = await response.text()
  } catch (error) {
    const timedOut = (error as Error).name === 'TimeoutError'
    recordUpstream(CS_UPSTREAM, timedOut ? 'timeout' : 'unreachable', (performance.now() - started) / 1000)
    throw csFailure(0, timedOut ? 'The stream materialization service did not answer in time.' : 'The stream materialization service could not be reached.', '', settings, error)
  }
  recordUpstream(CS_UPSTREAM, outcomeOfStatus(response.status), (performance.now() - started) / 1000)
  if (response.status >= 400 && response.status < 500) {
    throw csFailure(response.status, `The stream materialization service refused the query (${response.status}).`, text, settings).withStatus(422)
  }
  if (response.status !== 200) {
    throw csFailure(response.status, `The stream materialization service answered ${response.status}.`, text, settings)
  }
  const series = parseSeries(text)
  if (series === undefined) throw csFailure(200, 'The stream materialization service answered with a malformed body.', text, settings)
  return series
}

function csFailure (status: number, message: string, body: string, settings: TimeseriesSettings, cause?: unknown): GatewayError {
  const limit = settings.max_error_body_bytes
  const bytes = Buffer.from(body, 'utf8')
  const quoted = bytes.length > limit ? `${bytes.subarray(0, limit).toString('utf8')} [truncated]` : body
  return new GatewayError('cs_query_failed', { message, fields: { cs_status: status, cs_body: quoted }, cause })
}

function parseSeries (text: string): CsSeries[] | undefined {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return undefined
  }
  const series = (parsed as { series?: unknown } | null)?.series
  if (!Array.isArray(series)) return undefined
  for (const s of series as CsSeries[]) {
    if (typeof s?.store_org_id !== 'string' || !Array.isArray(s.points)) return undefined
    for (const p of s.points) if (typeof p?.ts !== 'string' || typeof p.value !== 'number') return undefined
  }
  return series as CsSeries[]
}
