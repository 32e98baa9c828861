import type { CsQuery, CsSeries } from '../timeseries/cs-client.js'

/** Parameter name → messages, the `errors` map of report_param_validation_failed. */
export type ParamErrors = Record<string, string[]>

/** What a report may use when it runs. */
export interface ReportContext {
  /** The stores the report covers: the caller's installed stores, or the checked `store_org_ids` parameter. */
  readonly stores: readonly string[]
  /** Queries the stream materialization service (fails with cs_query_failed). */
  query (query: CsQuery): Promise<CsSeries[]>
}

export interface ReportResult {
  columns: string[]
  rows: (string | number)[][]
}

/**
 * A report: a dotted slug, a JSON Schema for its parameters (ajv with formats; every property with a
 * description), cross-field checks the schema cannot say, and `run`. A report that declares `store_org_ids`
 * gets it checked against the caller's tree before it runs.
 */
export interface ReportDefinition<Params = Record<string, unknown>> {
  readonly report_id: string
  readonly description: string
  readonly parameter_schema: Record<string, unknown>
  /** Checks beyond the schema (e.g. from ≤ to); runs only on parameters the schema accepted. */
  check?(params: Params): ParamErrors
  run (params: Params, context: ReportContext): Promise<ReportResult>
}

/**
 * A report of its own parameter type as one of the list's: `check` and `run` take `Params`, which the loader's
 * validation of the body against `parameter_schema` (param-validation.ts) makes true before either runs; TS cannot
 * see that, and a function of `Params` is not one of `Record<string, unknown>`, hence the one assertion here.
 */
export function defineReport<Params> (report: ReportDefinition<Params>): ReportDefinition {
  const { check } = report
  return {
    report_id: report.report_id,
    description: report.description,
    parameter_schema: report.parameter_schema,
    check: check === undefined ? undefined : (params) => check(params as Params),
    run: async (params, context) => report.run(params as Params, context),
  }
}
