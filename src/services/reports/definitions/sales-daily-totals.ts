import type { ReportDefinition } from '../report-definition.js'
import { cents, checkRange, queryRange, rangeProperties } from './common.js'

interface DailyTotalsParams {
  from: string
  to: string
  store_org_ids?: string[]
  dimension: 'total' | 'store'
}

const METRICS = ['sales_total', 'transactions', 'items_sold'] as const

/** Sales, transactions and items sold per day, for all stores together or per store. */
export const salesDailyTotals: ReportDefinition<DailyTotalsParams> = {
  report_id: 'sales.daily_totals',
  description: 'Sales total, transactions and items sold per day (UTC), summed over the stores or per store.',
  parameter_schema: {
    type: 'object',
    additionalProperties: false,
    required: ['from', 'to'],
    properties: {
      ...rangeProperties,
      dimension: { type: 'string', enum: ['total', 'store'], default: 'total', description: '`total`: one row per day; `store`: one row per day and store.' },
    },
  },
  check: checkRange,
  async run (params, context) {
    const range = queryRange(params)
    const results = await Promise.all(METRICS.map((metric) =>
      context.query({ metric, stores: [...context.stores], ...range, granularity: 'day' })))
    const perStore = params.dimension === 'store'
    const rows = new Map<string, (string | number)[]>()
    results.forEach((series, m) => {
      for (const s of series) {
        for (const p of s.points) {
          const date = p.ts.slice(0, 10)
          const key = perStore ? `${date}|${s.store_org_id}` : date
          const row = rows.get(key) ?? (perStore ? [date, s.store_org_id, 0, 0, 0] : [date, 0, 0, 0])
          const at = (perStore ? 2 : 1) + m
          row[at] = (row[at] as number) + p.value
          rows.set(key, row)
        }
      }
    })
    const salesAt = perStore ? 2 : 1
    const sorted = [...rows.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, row]) => {
      row[salesAt] = cents(row[salesAt] as number)
      return row
    })
    return {
      columns: perStore ? ['date', 'store_org_id', ...METRICS] : ['date', ...METRICS],
      rows: sorted,
    }
  },
}
