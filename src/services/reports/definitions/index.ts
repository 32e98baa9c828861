import type { ReportDefinition } from '../report-definition.js'
import { salesByDepartment } from './sales-by-department.js'
import { salesDailyTotals } from './sales-daily-totals.js'

/** Every report this build knows; `services.reports.enabled_reports` picks among them (default: all). */
export const reportDefinitions: readonly ReportDefinition[] = [
  // Cast: a definition's `check`/`run` take its own Params type (contravariant), so it is not a ReportDefinition of
  // Record<string, unknown> to TS; the loader validates params against its parameter_schema before either runs.
  salesDailyTotals as unknown as ReportDefinition,
  salesByDepartment as unknown as ReportDefinition,
]
