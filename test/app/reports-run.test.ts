import t from 'tap'
import { answerQuery, type CsQueryBody } from '../simulators/cs-simulator.js'
import { csSetup } from '../helpers/exchange-config.js'

const JSON_HEADERS = { 'content-type': 'application/json' }
const cents = (v: number): number => Math.round(v * 100) / 100

t.test('sales.daily_totals sums the three metrics per day over the chosen stores', async (t) => {
  const { app, cs, hq } = await csSetup(t)
  const params = { from: '2026-03-01', to: '2026-03-02', store_org_ids: ['org_store_a', 'org_store_b'] }
  const res = await app.inject({ method: 'POST', url: '/v1/reports/sales.daily_totals/run', headers: { ...hq, ...JSON_HEADERS }, payload: params })
  t.equal(res.statusCode, 200)
  const base = { stores: params.store_org_ids, from: '2026-03-01T00:00:00Z', to: '2026-03-03T00:00:00Z', granularity: 'day' as const }
  const total = (metric: string, date: string): number => answerQuery({ ...base, metric }).series
    .flatMap((s) => s.points).filter((p) => p.ts.startsWith(date)).reduce((sum, p) => sum + p.value, 0)
  t.same(res.json(), {
    report_id: 'sales.daily_totals',
    params: { ...params, dimension: 'total' },
    columns: ['date', 'sales_total', 'transactions', 'items_sold'],
    rows: ['2026-03-01', '2026-03-02'].map((d) => [d, cents(total('sales_total', d)), total('transactions', d), total('items_sold', d)]),
  })
  t.equal(cs.queries.length, 3)
})

t.test('sales.by_department totals each department over the caller\'s stores', async (t) => {
  const { app, cs, hq } = await csSetup(t)
  const res = await app.inject({ method: 'POST', url: '/v1/reports/sales.by_department/run', headers: { ...hq, ...JSON_HEADERS }, payload: { from: '2026-03-01', to: '2026-03-07' } })
  t.equal(res.statusCode, 200)
  const query = cs.queries[0] as CsQueryBody
  t.same(query, { metric: 'sales_total', stores: ['org_store_a', 'org_store_b', 'org_store_c', 'org_store_nolane'], from: '2026-03-01T00:00:00Z', to: '2026-03-08T00:00:00Z', granularity: 'day', group_by: 'department' })
  const sums = new Map<string, number>()
  for (const s of answerQuery(query).series) sums.set(s.department as string, (sums.get(s.department as string) ?? 0) + s.points.reduce((a, p) => a + p.value, 0))
  t.same(res.json(), {
    report_id: 'sales.by_department',
    params: { from: '2026-03-01', to: '2026-03-07', dimension: 'department' },
    columns: ['department', 'sales_total'],
    rows: [...sums.entries()].sort().map(([d, v]) => [d, cents(v)]),
  })
})

t.test('an unknown or disabled report answers 404 report_not_found', async (t) => {
  const { app, hq } = await csSetup(t, { reports: { enabled_reports: ['sales.daily_totals'] } })
  for (const id of ['sales.nope', 'sales.by_department']) {
    const res = await app.inject({ method: 'POST', url: `/v1/reports/${id}/run`, headers: { ...hq, ...JSON_HEADERS }, payload: {} })
    t.same([res.statusCode, res.json()], [404, { error: 'report_not_found', report_id: id, message: 'Report not found.' }], id)
  }
})

t.test('parameters violating the schema answer 422 with every problem by parameter', async (t) => {
  const { app, cs, hq } = await csSetup(t)
  const res = await app.inject({
    method: 'POST',
    url: '/v1/reports/sales.by_department/run',
    headers: { ...hq, ...JSON_HEADERS },
    payload: { from: '01/03/2026', dimension: 'region', limit: 3 },
  })
  t.same([res.statusCode, res.json()], [422, {
    error: 'report_param_validation_failed',
    report_id: 'sales.by_department',
    errors: {
      to: ['is required'],
      limit: ['is not an accepted parameter'],
      from: ['must be a valid date (YYYY-MM-DD)'],
      dimension: ['must be one of: department, store_department'],
    },
    message: 'The report parameters are invalid.',
  }])
  t.equal(cs.queries.length, 0)
})

t.test('from after to is a parameter error', async (t) => {
  const { app, hq } = await csSetup(t)
  const res = await app.inject({ method: 'POST', url: '/v1/reports/sales.daily_totals/run', headers: { ...hq, ...JSON_HEADERS }, payload: { from: '2026-03-05', to: '2026-03-01' } })
  t.same([res.statusCode, res.json()], [422, {
    error: 'report_param_validation_failed', report_id: 'sales.daily_totals', errors: { to: ['must not be before from'] }, message: 'The report parameters are invalid.',
  }])
})

t.test('a body that is not an object is a parameter error', async (t) => {
  const { app, hq } = await csSetup(t)
  const res = await app.inject({ method: 'POST', url: '/v1/reports/sales.daily_totals/run', headers: { ...hq, ...JSON_HEADERS }, payload: '[1,2]' })
  t.same([res.statusCode, res.json()], [422, {
    error: 'report_param_validation_failed', report_id: 'sales.daily_totals', errors: { body: ['must be a JSON object of parameters'] }, message: 'The report parameters are invalid.',
  }])
})

t.test('a store outside the caller\'s tree answers 404 store_not_found', async (t) => {
  const { app, cs, hq } = await csSetup(t)
  const res = await app.inject({ method: 'POST', url: '/v1/reports/sales.daily_totals/run', headers: { ...hq, ...JSON_HEADERS }, payload: { from: '2026-03-01', to: '2026-03-01', store_org_ids: ['org_store_x'] } })
  t.same([res.statusCode, res.json()], [404, { error: 'store_not_found', store_org_id: 'org_store_x', message: 'Store not found or not accessible.' }])
  t.equal(cs.queries.length, 0)
})

t.test('a data source failure answers 422 report_failed echoing the submitted parameters', async (t) => {
  const { app, cs, hq } = await csSetup(t)
  cs.setMode({ kind: 'fail', status: 500 })
  const payload = { from: '2026-03-01', to: '2026-03-02' }
  const res = await app.inject({ method: 'POST', url: '/v1/reports/sales.daily_totals/run', headers: { ...hq, ...JSON_HEADERS }, payload })
  t.same([res.statusCode, res.json()], [422, {
    error: 'report_failed',
    report_id: 'sales.daily_totals',
    params_echo: payload,
    message: 'The report\'s data source failed: The stream materialization service answered 500.',
  }])
})
