import type { FastifyRequest } from 'fastify'
import { GatewayError } from '../../plugin/gateway-error.js'
import { traceOf } from '../../observability/trace-context.js'
import type { ServiceModule } from '../service-module.js'
import { callerStores } from './caller-stores.js'
import { csUpstream, queryCs } from './cs-client.js'
import { parseTimeseriesParams } from './query-params.js'
import { timeseriesSettings, timeseriesSettingsSchema } from './settings.js'
import { rfc3339 } from './time-range.js'

/**
 * HQ timeseries: `GET <prefix>/timeseries/:metric` reads a metric for the caller's stores from the stream
 * materialization service. Suggested chain: `auth` → `token-type` → `scope: exchange:timeseries.read`.
 */
export const timeseriesService: ServiceModule = {
  name: 'timeseries',
  description: 'HQ timeseries read from the stream materialization service.',
  routes: [{
    id: 'query',
    method: 'GET',
    url: '/timeseries/:metric',
    description: 'A metric per store over a range. Scope: exchange:timeseries.read.',
    scopes: ['exchange:timeseries.read'],
    errors: ['validation_failed', 'store_not_found', 'cs_query_failed'],
  }],
  settingsSchema: timeseriesSettingsSchema,
  requiredSettings: ['base_url'],
  build (deps) {
    return {
      handlers: {
        query: async function queryTimeseries (request: FastifyRequest) {
          const settings = timeseriesSettings(request.gw.snapshot.config)
          if (settings === undefined) throw new GatewayError('service_unavailable')
          const { metric } = request.params as { metric: string }
          const params = parseTimeseriesParams(metric, request.query as Record<string, unknown>, settings)
          const stores = callerStores(request, params.stores)
          const from = rfc3339(params.from)
          const to = rfc3339(params.to)
          const series = stores.length === 0
            ? []
            : await queryCs(csUpstream(deps.shared.upstreams.services, settings), settings, { metric, stores, from, to, granularity: params.granularity }, traceOf(request.raw))
          const byStore = new Map(series.map((s) => [s.store_org_id, s.points]))
          return {
            metric,
            granularity: params.granularity,
            from,
            to,
            series: stores.map((id) => ({ store_org_id: id, points: (byStore.get(id) ?? []).map((p) => ({ ts: p.ts, value: p.value })) })),
          }
        },
      },
    }
  },
}

export default timeseriesService
