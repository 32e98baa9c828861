import type { GatewayConfig } from '../../config/types.js'

/** `services.timeseries` settings beside prefix, envelope, policies and routes (reports read them too). */
export interface TimeseriesSettings {
  /** The stream materialization service; queries go to `POST {base_url}/query`. */
  base_url: string
  timeout_ms: number
  metrics: string[]
  max_points: number
  max_error_body_bytes: number
}

export const TIMESERIES_DEFAULTS: Omit<TimeseriesSettings, 'base_url'> = {
  timeout_ms: 5000,
  metrics: ['sales_total', 'transactions', 'items_sold'],
  max_points: 5000,
  max_error_body_bytes: 8192,
}

export const timeseriesSettingsSchema: Record<string, Record<string, unknown>> = {
  base_url: {
    type: 'string',
    pattern: '^https?://',
    description: 'Base URL of the stream materialization service (queried with POST {base_url}/query). Reports use it too.',
  },
  timeout_ms: {
    type: 'integer',
    minimum: 1,
    maximum: 120000,
    default: TIMESERIES_DEFAULTS.timeout_ms,
    description: 'Time allowed for one stream materialization query, answer included; beyond it the request fails with 502 cs_query_failed.',
  },
  metrics: {
    type: 'array',
    items: { type: 'string', pattern: '^[a-z][a-z0-9_]{0,63}$', description: 'A metric name.' },
    uniqueItems: true,
    minItems: 1,
    default: TIMESERIES_DEFAULTS.metrics,
    description: 'Metrics callers may query (`GET /timeseries/:metric`).',
  },
  max_points: {
    type: 'integer',
    minimum: 1,
    maximum: 1000000,
    default: TIMESERIES_DEFAULTS.max_points,
    description: 'Most buckets one series may have (range divided by granularity); more answers 422 validation_failed.',
  },
  max_error_body_bytes: {
    type: 'integer',
    minimum: 0,
    maximum: 1048576,
    default: TIMESERIES_DEFAULTS.max_error_body_bytes,
    description: 'How much of a failing query\'s body is kept in cs_body.',
  },
}

// One settings object per config snapshot: the engine's upstream is reconciled only when it changes.
const bySnapshot = new WeakMap<GatewayConfig, TimeseriesSettings | undefined>()

/**
 * The timeseries settings of a config (defaults filled in), or undefined when the service is not configured.
 * The same config gives the same object.
 */
export function timeseriesSettings (config: GatewayConfig): TimeseriesSettings | undefined {
  if (bySnapshot.has(config)) return bySnapshot.get(config)
  const settings = readSettings(config)
  bySnapshot.set(config, settings)
  return settings
}

function readSettings (config: GatewayConfig): TimeseriesSettings | undefined {
  const block = config.services.timeseries as Partial<TimeseriesSettings> | undefined
  if (block?.base_url === undefined) return undefined
  return {
    base_url: block.base_url,
    timeout_ms: block.timeout_ms ?? TIMESERIES_DEFAULTS.timeout_ms,
    metrics: block.metrics ?? TIMESERIES_DEFAULTS.metrics,
    max_points: block.max_points ?? TIMESERIES_DEFAULTS.max_points,
    max_error_body_bytes: block.max_error_body_bytes ?? TIMESERIES_DEFAULTS.max_error_body_bytes,
  }
}
