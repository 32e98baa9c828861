import { defineReport, type ReportDefinition } from '../report-definition.js'
import { salesByDepartment } from './sales-by-department.js'
import { salesDailyTotals } from './sales-daily-totals.js'

/** Every report this build knows; `services.reports.enabled_reports` picks among them (default: all). */
export const reportDefinitions: readonly ReportDefinition[] = [
  defineReport(salesDailyTotals),
  defineReport(salesByDepartment),
]
