import type { ReportDefinition } from '../report-definition.js'
import { cents, checkRange, queryRange, rangeProperties } from './common.js'

interface ByDepartmentParams {
  from: string
  to: string
  store_org_ids?: string[]
  dimension: 'department' | 'store_department'
}

/** Sales total over a range, split by department (and optionally by store). */
export const salesByDepartment: ReportDefinition<ByDepartmentParams> = {
  report_id: 'sales.by_department',
  description: 'Sales total over the range per department, over all stores or per store and department.',
  parameter_schema: {
    type: 'object',
    additionalProperties: false,
    required: ['from', 'to'],
    properties: {
      ...rangeProperties,
      dimension: {
        type: 'string',
        enum: ['department', 'store_department'],
        default: 'department',
        description: '`department`: one row per department; `store_department`: one row per store and department.',
      },
    },
  },
  check: checkRange,
  async run (params, context) {
    const series = await context.query({
      metric: 'sales_total', stores: [...context.stores], ...queryRange(params), granularity: 'day', group_by: 'department',
    })
    const perStore = params.dimension === 'store_department'
    const totals = new Map<string, (string | number)[]>()
    for (const s of series) {
      const department = s.department ?? 'unassigned'
      const key = perStore ? `${s.store_org_id}|${department}` : department
      const row = totals.get(key) ?? (perStore ? [s.store_org_id, department, 0] : [department, 0])
      const at = row.length - 1
      row[at] = (row[at] as number) + s.points.reduce((sum, p) => sum + p.value, 0)
      totals.set(key, row)
    }
    const rows = [...totals.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, row]) => {
      row[row.length - 1] = cents(row[row.length - 1] as number)
      return row
    })
    return { columns: perStore ? ['store_org_id', 'department', 'sales_total'] : ['department', 'sales_total'], rows }
  },
}
