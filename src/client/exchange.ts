import type { CallOptions, HttpCore } from './http-core.js'

export type Granularity = 'hour' | 'day' | 'week' | 'month'

export interface TimeseriesParams {
  /** `YYYY-MM-DD` (a whole UTC day) or RFC 3339. */
  from: string
  /** `YYYY-MM-DD` (inclusive) or RFC 3339. */
  to: string
  /** Default: every installed store of the caller's tree. */
  storeOrgIds?: string[]
  granularity?: Granularity
}

export interface Timeseries {
  metric: string
  granularity: Granularity
  from: string
  to: string
  series: Array<{ store_org_id: string, points: Array<{ ts: string, value: number }> }>
}

export interface ReportResult {
  report_id: string
  params: Record<string, unknown>
  columns: string[]
  rows: unknown[][]
}

/** One entry of the reports registry: what `run` accepts, as JSON Schema. */
export interface ReportDescription {
  report_id: string
  description: string
  parameter_schema: Record<string, unknown>
}

export type HostfileAction = 'A' | 'C' | 'D'

/** One host-file record: `record_type`, `action_code` and the type's snake_case fields. */
export interface HostfileRecord {
  record_type: string
  action_code: HostfileAction
  [field: string]: string | number | boolean | null
}

export interface HostFile {
  file_name: string
  format: 'pipe-delimited/v1'
  content: string
  record_counts: Record<string, number>
  total_records: number
  /** SHA-256 of `content`, lower-case hex. */
  checksum: string
}

/** `GET /v1/hq/timeseries/{metric}` (scope `exchange:timeseries.read`). */
export class TimeseriesApi {
  constructor (private readonly core: HttpCore, private readonly prefix: string) {}

  query (metric: string, params: TimeseriesParams, options: CallOptions = {}): Promise<Timeseries> {
    const query = new URLSearchParams({ from: params.from, to: params.to })
    if (params.storeOrgIds !== undefined) for (const id of params.storeOrgIds) query.append('store_org_id', id)
    if (params.granularity !== undefined) query.set('granularity', params.granularity)
    return this.core.json<Timeseries>({ ...options, method: 'GET', path: `${this.prefix}/timeseries/${encodeURIComponent(metric)}`, query })
  }
}

/**
 * The reports registry and `POST /v1/reports/{report_id}/run` (scope `exchange:reports.run`). None of them
 * changes state, so all are retried on 5xx.
 */
export class ReportsApi {
  constructor (private readonly core: HttpCore, private readonly prefix: string) {}

  /** `GET /v1/reports`: every report the gateway serves, with its `parameter_schema`. */
  async list (options: CallOptions = {}): Promise<ReportDescription[]> {
    const answer = await this.core.json<{ reports: ReportDescription[] }>({ ...options, method: 'GET', path: this.prefix })
    return answer.reports
  }

  /** `GET /v1/reports/{report_id}`; an unknown id throws `report_not_found`. */
  get (reportId: string, options: CallOptions = {}): Promise<ReportDescription> {
    return this.core.json<ReportDescription>({ ...options, method: 'GET', path: `${this.prefix}/${encodeURIComponent(reportId)}` })
  }

  run (reportId: string, params: Record<string, unknown> = {}, options: CallOptions = {}): Promise<ReportResult> {
    return this.core.json<ReportResult>({ ...options, method: 'POST', path: `${this.prefix}/${encodeURIComponent(reportId)}/run`, json: params, idempotent: true })
  }
}

/** `POST /v1/hostfile/files/author` (scope `exchange:hostfile.author`). A pure function, so retried on 5xx. */
export class HostfileApi {
  constructor (private readonly core: HttpCore, private readonly prefix: string) {}

  author (input: { records: HostfileRecord[], file_name?: string }, options: CallOptions = {}): Promise<HostFile> {
    return this.core.json<HostFile>({ ...options, method: 'POST', path: `${this.prefix}/files/author`, json: input, idempotent: true })
  }
}
