import { Type, type Static } from '@sinclair/typebox'
import type { FastifyRequest } from 'fastify'
import type { GatewayConfig } from '../../config/types.js'
import { GatewayError } from '../../plugin/gateway-error.js'
import { traceOf } from '../../observability/trace-context.js'
import type { ServiceModule, ServiceSettingProblem } from '../service-module.js'
import { blockSettings, serviceSettings, settingsProperties } from '../service-settings.js'
import type { ServiceConfig } from '../../config/types.js'
import { callerStores } from '../timeseries/caller-stores.js'
import { csUpstream, queryCs } from '../timeseries/cs-client.js'
import { timeseriesSettings } from '../timeseries/settings.js'
import { reportDefinitions } from './definitions/index.js'
import { validateParams } from './param-validation.js'
import type { ReportDefinition } from './report-definition.js'

const byId = new Map(reportDefinitions.map((r) => [r.report_id, r]))

/** `services.reports` settings beside prefix, envelope, policies and routes: one declaration, schema and type. */
export const ReportsSettingsSchema = Type.Object({
  enabled_reports: Type.Optional(Type.Array(
    Type.Unsafe<string>({ type: 'string', enum: reportDefinitions.map((r) => r.report_id), description: 'A report id.' }),
    {
      uniqueItems: true,
      description: 'Reports served (others answer 404 report_not_found); default all of: ' +
        `${reportDefinitions.map((r) => r.report_id).join(', ')}.`,
    },
  )),
})

export type ReportsSettings = Static<typeof ReportsSettingsSchema>

/** The reports a config serves: `services.reports.enabled_reports`, or all when it is absent. */
function enabledReport (config: GatewayConfig, reportId: string): ReportDefinition | undefined {
  const enabled = serviceSettings(config, 'reports', ReportsSettingsSchema)?.enabled_reports
  if (enabled !== undefined && !enabled.includes(reportId)) return undefined
  return byId.get(reportId)
}

/** What the registry shows of a report: what a caller needs to run it, nothing of how it runs. */
function describeReport (report: ReportDefinition): { report_id: string, description: string, parameter_schema: Record<string, unknown> } {
  return { report_id: report.report_id, description: report.description, parameter_schema: report.parameter_schema }
}

/** The run body: the `parameter_schema` of one of the enabled reports (by the path's report_id). */
function reportsBody (settings: ServiceConfig): Record<string, unknown> {
  const enabled = blockSettings(settings, ReportsSettingsSchema)?.enabled_reports
  return {
    description: 'The parameters of the report named by report_id: its parameter_schema.',
    oneOf: reportDefinitions
      .filter((r) => enabled === undefined || enabled.includes(r.report_id))
      .map((r) => ({ ...r.parameter_schema, title: r.report_id, description: `report_id ${r.report_id}: ${r.description}` })),
  }
}

/**
 * Reports: `GET <prefix>` lists the served reports with their `parameter_schema`, `GET <prefix>/:report_id`
 * shows one, and `POST <prefix>/:report_id/run` checks the body against the report's parameter_schema and runs it on
 * the stream materialization service configured under `services.timeseries`. Suggested chain: `auth` →
 * `token-type` → `scope: exchange:reports.run`.
 */
export const reportsService: ServiceModule = {
  name: 'reports',
  description: 'Reports computed from the stream materialization service.',
  routes: [{
    id: 'list',
    method: 'GET',
    url: '/',
    description: 'Lists the served reports: id, description and parameter_schema. Scope: exchange:reports.run.',
    scopes: ['exchange:reports.run'],
  }, {
    id: 'get',
    method: 'GET',
    url: '/:report_id',
    description: 'One report\'s id, description and parameter_schema. Scope: exchange:reports.run.',
    scopes: ['exchange:reports.run'],
    errors: ['report_not_found'],
  }, {
    id: 'run',
    method: 'POST',
    url: '/:report_id/run',
    description: 'Runs a report. Scope: exchange:reports.run.',
    scopes: ['exchange:reports.run'],
    body: reportsBody,
    errors: ['report_not_found', 'report_param_validation_failed', 'report_failed'],
  }],
  settingsSchema: settingsProperties(ReportsSettingsSchema),
  check (_settings, config): ServiceSettingProblem[] {
    if (timeseriesSettings(config) !== undefined) return []
    return [{ path: '', message: 'reports read the stream materialization service: configure services.timeseries.base_url' }]
  },
  build (deps) {
    return {
      handlers: {
        list: async function listReports (request: FastifyRequest) {
          const config = request.gw.snapshot.config
          const reports = reportDefinitions.filter((r) => enabledReport(config, r.report_id) !== undefined)
          return { reports: reports.map(describeReport) }
        },
        get: async function getReport (request: FastifyRequest) {
          const { report_id: reportId } = request.params as { report_id: string }
          const report = enabledReport(request.gw.snapshot.config, reportId)
          if (report === undefined) throw new GatewayError('report_not_found', { fields: { report_id: reportId } })
          return describeReport(report)
        },
        run: async function runReport (request: FastifyRequest) {
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
            const upstream = csUpstream(deps.shared.upstreams.services, settings)
            const trace = traceOf(request.raw)
            const result = await report.run(params, { stores, query: (q) => queryCs(upstream, settings, q, trace) })
            return { report_id: reportId, params, columns: result.columns, rows: result.rows }
          } catch (error) {
            throw new GatewayError('report_failed', {
              message: reportFailure(error),
              fields: { report_id: reportId, params_echo: request.body ?? {} },
              cause: error,
            })
          }
        },
      },
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
