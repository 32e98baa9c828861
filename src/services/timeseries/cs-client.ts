import { GatewayError } from '../../plugin/gateway-error.js'
import { callUpstream } from '../../upstream/call.js'
import type { UpstreamTrace } from '../../upstream/headers.js'
import type { UpstreamRegistry } from '../../upstream/registry.js'
import { singleTargetSettings, type UpstreamSettings } from '../../upstream/settings.js'
import type { Upstream } from '../../upstream/upstream.js'
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

/** The largest answer read from the service; a longer one is a malformed answer (502). */
export const CS_ANSWER_LIMIT = 64 * 1048576

/** Connections to the stream materialization service at most (it had none before: global fetch's pool). */
const CS_MAX_SOCKETS = 64

const upstreamSettings = new WeakMap<TimeseriesSettings, UpstreamSettings>()

/**
 * The stream materialization service's upstream (one target, no retry: a query is a POST), shared by the
 * timeseries and reports services through the shared upstreams' `services` registry.
 */
export function csUpstream (services: UpstreamRegistry<UpstreamSettings>, settings: TimeseriesSettings): Upstream {
  let derived = upstreamSettings.get(settings)
  if (derived === undefined) {
    derived = singleTargetSettings(settings.base_url, {
      label: 'The stream materialization service',
      max_sockets: CS_MAX_SOCKETS,
      timeouts: { connect_ms: settings.timeout_ms, response_ms: settings.timeout_ms, body_idle_ms: settings.timeout_ms },
    })
    upstreamSettings.set(settings, derived)
  }
  return services.get('timeseries', derived)
}

/**
 * Runs one query through the upstream engine. Failures are `cs_query_failed`: 422 when the service answered 4xx
 * (the query was refused), 502 when it answered 5xx, a malformed body, or nothing in time (`cs_status` 0; why is in
 * the log). `cs_body` quotes at most `max_error_body_bytes` of its answer; the service's address is never in the
 * message. `trace` is the calling request's trace context (sent as `traceparent`); the engine counts each call as
 * upstream `timeseries` in `lanegate_upstream_*`.
 */
export async function queryCs (upstream: Upstream, settings: TimeseriesSettings, query: CsQuery, trace?: UpstreamTrace): Promise<CsSeries[]> {
  let status: number
  let text: string
  try {
    const answer = await callUpstream(upstream, {
      method: 'POST',
      path: '/query',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      trace,
      body: JSON.stringify(query),
      timeoutMs: settings.timeout_ms,
      maxBodyBytes: CS_ANSWER_LIMIT,
      maxErrorBodyBytes: settings.max_error_body_bytes,
    })
    status = answer.status
    text = answer.body
  } catch (error) {
    const kind = error instanceof GatewayError ? error.fields.upstream_failure : undefined
    const message = kind === 'timeout'
      ? 'The stream materialization service did not answer in time.'
      : kind === 'protocol'
        ? 'The stream materialization service answered with a malformed body.'
        : 'The stream materialization service could not be reached.'
    throw csFailure(0, message, '', settings, error)
  }
  if (status >= 400 && status < 500) {
    throw csFailure(status, `The stream materialization service refused the query (${status}).`, text, settings).withStatus(422)
  }
  if (status !== 200) {
    throw csFailure(status, `The stream materialization service answered ${status}.`, text, settings)
  }
  const series = parseSeries(text)
  if (series === undefined) throw csFailure(200, 'The stream materialization service answered with a malformed body.', text, settings)
  return series
}

function csFailure (status: number, message: string, body: string, settings: TimeseriesSettings, cause?: unknown): GatewayError {
  // 4xx/5xx bodies come bounded from the engine; a 2xx/3xx body is cut here.
  const limit = settings.max_error_body_bytes
  const bytes = status >= 400 ? undefined : Buffer.from(body, 'utf8')
  const quoted = bytes !== undefined && bytes.length > limit ? `${bytes.subarray(0, limit).toString('utf8')} [truncated]` : body
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
