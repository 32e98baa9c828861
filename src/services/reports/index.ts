import type { FastifyRequest } from 'fastify'
import type { GatewayConfig } from '../../config/types.js'
import { GatewayError } from '../../errors/gateway-error.js'
import type { ServiceModule, ServiceSettingProblem } from '../service-module.js'
import { callerStores } from '../timeseries/caller-stores.js'
import { csUpstream, queryCs } from '../timeseries/cs-client.js'
import { timeseriesSettings } from '../timeseries/settings.js'
import { reportDefinitions } from './definitions/index.js'
import { validateParams } from './param-validation.js'
import type { ReportDefinition } from './report-definition.js'

const byId = new Map(reportDefinitions.map((r) => [r.report_id, r]))

/** The reports a config serves: `services.reports.enabled_reports`, or all when it is absent. */
function enabledReport (config: GatewayConfig, reportId: string): ReportDefinition | undefined {
  const enabled = (config.services.reports as { enabled_reports?: string[] } | undefined)?.enabled_reports
  if (enabled !== undefined && !enabled.includes(reportId)) return undefined
  return byId.get(reportId)
}

/**
 * Reports: `POST <prefix>/:report_id/run` checks the body against the report's parameter_schema and runs it on
 * the stream materialization service configured under `services.timeseries`. Suggested chain: `auth` →
 * `token-type` → `scope: exchange:reports.run`.
 */
export const reportsService: ServiceModule = {
  name: 'reports',
  description: 'Reports computed from the stream materialization service.',
  routeIds: ['run'],
  settingsSchema: {
    enabled_reports: {
      type: 'array',
      items: { type: 'string', enum: reportDefinitions.map((r) => r.report_id), description: 'A report id.' },
      uniqueItems: true,
      description: 'Reports served (others answer 404 report_not_found); default all of: ' +
        `${reportDefinitions.map((r) => r.report_id).join(', ')}.`,
    },
  },
  check (_settings, config): ServiceSettingProblem[] {
    if (timeseriesSettings(config) !== undefined) return []
    return [{ path: '', message: 'reports read the stream materialization service: configure services.timeseries.base_url' }]
  },
  build (deps) {
    return {
      routes: [{
        id: 'run',
        method: 'POST',
        url: '/:report_id/run',
        description: 'Runs a report. Scope: exchange:reports.run.',
        handler: async function runReport (request: FastifyRequest) {
          const { report_id: reportId } = request.params as { report_id: string }
          const report = enabledReport(request.gw.snapshot.config, reportId)
          if (report === undefined) throw new GatewayError('report_not_found', { fields: { report_id: reportId } })

          const checked = validateParams(report, request.body)
          if ('errors' in checked) {
            throw new GatewayError('report_param_validation_failed', { fields: { report_id: reportId, errors: checked.errors } })
          }
          const { params } = checked
          const stores = callerStores(request, params.store_org_ids as string[] | undefined)
          const settings = timeseriesSettings(request.gw.snapshot.config)
          try {
            if (settings === undefined) throw new Error('services.timeseries is not configured')
            const result = await report.run(params, { stores, query: (q) => queryCs(csUpstream(deps.shared.upstreams.services, settings), settings, q) })
            return { report_id: reportId, params, columns: result.columns, rows: result.rows }
          } catch (error) {
            throw new GatewayError('report_failed', {
              message: reportFailure(error),
              fields: { report_id: reportId, params_echo: request.body ?? {} },
              cause: error,
            })
          }
        },
      }],
    }
  },
}

/** What the caller learns about a failed run: the source's own catalogued message, never internals. */
function reportFailure (error: unknown): string {
  if (error instanceof GatewayError && error.code === 'cs_query_failed') {
    return `The report's data source failed: ${error.message}`
  }
  return 'The report failed to run.'
}

export default reportsService
