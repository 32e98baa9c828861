import t from 'tap'
import { buildTestApp, getToken, type TestApp } from '../helpers/build-app.js'
import { salesByDepartment } from '../../src/services/reports/definitions/sales-by-department.js'
import { salesDailyTotals } from '../../src/services/reports/definitions/sales-daily-totals.js'

const describe = (r: { report_id: string, description: string, parameter_schema: Record<string, unknown> }): Record<string, unknown> =>
  ({ report_id: r.report_id, description: r.description, parameter_schema: r.parameter_schema })

let gw: TestApp
let exchange: string
t.before(async () => {
  gw = await buildTestApp()
  exchange = await getToken(gw.app, 'demo-exchange')
})
t.teardown(async () => { await gw.close() })

t.test('GET /v1/reports lists every served report with its id, description and parameter_schema', async (t) => {
  const res = await gw.app.inject({ method: 'GET', url: '/v1/reports', headers: { authorization: `Bearer ${exchange}` } })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { reports: [describe(salesDailyTotals), describe(salesByDepartment)] })
})

t.test('GET /v1/reports/{report_id} shows one report', async (t) => {
  const res = await gw.app.inject({ method: 'GET', url: '/v1/reports/sales.by_department', headers: { authorization: `Bearer ${exchange}` } })
  t.equal(res.statusCode, 200)
  t.same(res.json(), describe(salesByDepartment))
})

t.test('an unknown report id answers 404 report_not_found', async (t) => {
  const res = await gw.app.inject({ method: 'GET', url: '/v1/reports/sales.nope', headers: { authorization: `Bearer ${exchange}` } })
  t.same([res.statusCode, res.json()], [404, { error: 'report_not_found', report_id: 'sales.nope', message: 'Report not found.' }])
})

t.test('the registry needs a token with exchange:reports.run', async (t) => {
  const none = await gw.app.inject({ method: 'GET', url: '/v1/reports' })
  t.same([none.statusCode, none.json()], [401, { error: 'Unauthenticated.' }])
  const content = await getToken(gw.app, 'demo-content')
  const other = await gw.app.inject({ method: 'GET', url: '/v1/reports/sales.by_department', headers: { authorization: `Bearer ${content}` } })
  t.same([other.statusCode, other.json()], [403, { error: 'Forbidden.' }])
})

t.test('a report left out of enabled_reports is neither listed nor shown', async (t) => {
  const only = await buildTestApp({
    patch: (config) => { (config.services.reports as Record<string, unknown>).enabled_reports = ['sales.daily_totals'] },
  })
  t.teardown(() => only.close())
  const token = await getToken(only.app, 'demo-exchange')
  const list = await only.app.inject({ method: 'GET', url: '/v1/reports', headers: { authorization: `Bearer ${token}` } })
  t.same(list.json(), { reports: [describe(salesDailyTotals)] })
  const one = await only.app.inject({ method: 'GET', url: '/v1/reports/sales.by_department', headers: { authorization: `Bearer ${token}` } })
  t.same([one.statusCode, one.json()], [404, { error: 'report_not_found', report_id: 'sales.by_department', message: 'Report not found.' }])
})
