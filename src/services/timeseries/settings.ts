import { Type, type Static } from '@sinclair/typebox'
import type { GatewayConfig } from '../../config/types.js'
import { serviceSettings, settingsProperties } from '../service-settings.js'

/**
 * `services.timeseries` settings beside prefix, envelope, policies and routes (reports read them too): one
 * declaration, schema and type.
 */
export const TimeseriesSettingsSchema = Type.Object({
  base_url: Type.String({
    pattern: '^https?://',
    description: 'Base URL of the stream materialization service (queried with POST {base_url}/query). Reports use it too.',
  }),
  timeout_ms: Type.Integer({
    minimum: 1,
    maximum: 120000,
    default: 5000,
    description: 'Time allowed for one stream materialization query, answer included; beyond it the request fails with 502 cs_query_failed.',
  }),
  metrics: Type.Array(Type.String({ pattern: '^[a-z][a-z0-9_]{0,63}$', description: 'A metric name.' }), {
    uniqueItems: true,
    minItems: 1,
    default: ['sales_total', 'transactions', 'items_sold'],
    description: 'Metrics callers may query (`GET /timeseries/:metric`).',
  }),
  max_points: Type.Integer({
    minimum: 1,
    maximum: 1000000,
    default: 5000,
    description: 'Most buckets one series may have (range divided by granularity); more answers 422 validation_failed.',
  }),
  max_error_body_bytes: Type.Integer({
    minimum: 0,
    maximum: 1048576,
    default: 8192,
    description: 'How much of a failing query\'s body is kept in cs_body.',
  }),
})

export type TimeseriesSettings = Static<typeof TimeseriesSettingsSchema>

export const timeseriesSettingsSchema = settingsProperties(TimeseriesSettingsSchema)

/** The timeseries settings of a validated config (defaults filled by the loader), or undefined when not configured. */
export function timeseriesSettings (config: GatewayConfig): TimeseriesSettings | undefined {
  return serviceSettings(config, 'timeseries', TimeseriesSettingsSchema)
}
