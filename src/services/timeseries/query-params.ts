import { GatewayError } from '../../plugin/gateway-error.js'
import { GRANULARITIES, type Granularity } from './cs-client.js'
import type { TimeseriesSettings } from './settings.js'
import { bucketCount, parseBound } from './time-range.js'

/** A checked timeseries query. */
export interface TimeseriesParams {
  metric: string
  /** Undefined: all of the caller's stores. */
  stores?: string[]
  from: Date
  to: Date
  granularity: Granularity
}

const KNOWN = new Set(['store_org_id', 'from', 'to', 'granularity'])

/**
 * Checks `GET /timeseries/:metric?store_org_id=&from=&to=&granularity=`; every problem is collected into one
 * 422 validation_failed `{errors: {param: [messages]}}`. `store_org_id` may repeat or be a comma list.
 */
export function parseTimeseriesParams (metric: string, query: Record<string, unknown>, settings: TimeseriesSettings): TimeseriesParams {
  const errors: Record<string, string[]> = {}
  const add = (name: string, message: string): void => { (errors[name] ??= []).push(message) }

  for (const name of Object.keys(query)) if (!KNOWN.has(name)) add(name, 'is not an accepted parameter')
  if (!settings.metrics.includes(metric)) add('metric', `must be one of: ${settings.metrics.join(', ')}`)

  const one = (name: string): string | undefined => {
    const value = query[name]
    if (value === undefined) return undefined
    if (typeof value !== 'string') { add(name, 'must be given once'); return undefined }
    return value
  }
  const fromText = one('from')
  const toText = one('to')
  const granularityText = one('granularity') ?? 'day'
  const from = fromText === undefined ? undefined : parseBound(fromText, 'from')
  const to = toText === undefined ? undefined : parseBound(toText, 'to')
  if (fromText === undefined) add('from', 'is required')
  else if (from === undefined) add('from', 'must be a date (YYYY-MM-DD) or an RFC 3339 date-time')
  if (toText === undefined) add('to', 'is required')
  else if (to === undefined) add('to', 'must be a date (YYYY-MM-DD) or an RFC 3339 date-time')
  if (from !== undefined && to !== undefined && from.getTime() >= to.getTime()) add('to', 'must be after from')

  const granularity = (GRANULARITIES as readonly string[]).includes(granularityText) ? granularityText as Granularity : undefined
  if (granularity === undefined) add('granularity', `must be one of: ${GRANULARITIES.join(', ')}`)
  if (from !== undefined && to !== undefined && granularity !== undefined && from < to &&
    bucketCount(from, to, granularity) > settings.max_points) {
    add('granularity', `the range has more than ${settings.max_points} ${granularity} buckets; use a coarser granularity or a shorter range`)
  }

  let stores: string[] | undefined
  const raw = query.store_org_id
  if (raw !== undefined) {
    stores = [raw].flat().flatMap((v) => String(v).split(',')).map((s) => s.trim())
    if (stores.some((s) => s === '')) add('store_org_id', 'must not be empty')
  }

  if (Object.keys(errors).length > 0) {
    throw new GatewayError('validation_failed', { message: 'The query parameters are invalid.', fields: { errors } })
  }
  return { metric, stores, from: from as Date, to: to as Date, granularity: granularity as Granularity }
}
