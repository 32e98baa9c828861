import t from 'tap'
import { answerQuery } from '../simulators/cs-simulator.js'
import { csSetup } from '../helpers/exchange-config.js'

const HQ_STORES = ['org_store_a', 'org_store_b', 'org_store_c', 'org_store_nolane']

t.test('a metric for chosen stores comes back per store, from the stream materialization', async (t) => {
  const { app, cs, hq } = await csSetup(t)
  const res = await app.inject({ url: '/v1/hq/timeseries/sales_total?store_org_id=org_store_a,org_store_c&from=2026-03-01&to=2026-03-03&granularity=day', headers: hq })
  t.equal(res.statusCode, 200)
  const query = { metric: 'sales_total', stores: ['org_store_a', 'org_store_c'], from: '2026-03-01T00:00:00Z', to: '2026-03-04T00:00:00Z', granularity: 'day' as const }
  t.same(cs.queries, [query])
  t.same(res.json(), {
    metric: 'sales_total',
    granularity: 'day',
    from: '2026-03-01T00:00:00Z',
    to: '2026-03-04T00:00:00Z',
    series: answerQuery(query).series,
  })
  t.equal(res.json().series[0].points.length, 3)
})

t.test('without store_org_id, every installed store of the caller\'s tree is queried', async (t) => {
  const { app, cs, hq } = await csSetup(t)
  const res = await app.inject({ url: '/v1/hq/timeseries/transactions?from=2026-03-01T00:00:00Z&to=2026-03-01T03:00:00Z&granularity=hour', headers: hq })
  t.equal(res.statusCode, 200)
  t.same(cs.queries[0]?.stores, HQ_STORES)
  t.same(res.json().series.map((s: { store_org_id: string, points: unknown[] }) => [s.store_org_id, s.points.length]), HQ_STORES.map((s) => [s, 3]))
})

t.test('repeated store_org_id parameters are accepted', async (t) => {
  const { app, cs, hq } = await csSetup(t)
  const res = await app.inject({ url: '/v1/hq/timeseries/items_sold?store_org_id=org_store_b&store_org_id=org_store_a&from=2026-03-01&to=2026-03-01', headers: hq })
  t.equal(res.statusCode, 200)
  t.same(cs.queries[0]?.stores, ['org_store_b', 'org_store_a'])
})

t.test('a store outside the caller\'s tree, unknown or not installed answers 404 naming it; CS not asked', async (t) => {
  const { app, cs, hq } = await csSetup(t)
  for (const bad of ['org_store_x', 'org_nope', 'org_store_idle']) {
    const res = await app.inject({ url: `/v1/hq/timeseries/sales_total?store_org_id=org_store_a,${bad}&from=2026-03-01&to=2026-03-02`, headers: hq })
    t.same([res.statusCode, res.json()], [404, { error: 'store_not_found', store_org_id: bad, message: 'Store not found or not accessible.' }], bad)
  }
  t.equal(cs.queries.length, 0)
})

t.test('bad parameters answer 422 validation_failed with every problem', async (t) => {
  const { app, cs, hq } = await csSetup(t)
  const res = await app.inject({ url: '/v1/hq/timeseries/revenue?from=2026-02-30&granularity=year&limit=5', headers: hq })
  t.same([res.statusCode, res.json()], [422, {
    error: 'validation_failed',
    errors: {
      limit: ['is not an accepted parameter'],
      metric: ['must be one of: sales_total, transactions, items_sold'],
      from: ['must be a date (YYYY-MM-DD) or an RFC 3339 date-time'],
      to: ['is required'],
      granularity: ['must be one of: hour, day, week, month'],
    },
    message: 'The query parameters are invalid.',
  }])
  t.equal(cs.queries.length, 0)
})

t.test('a reversed range and too many buckets are refused', async (t) => {
  const { app, hq } = await csSetup(t, { timeseries: { max_points: 100 } })
  const reversed = await app.inject({ url: '/v1/hq/timeseries/sales_total?from=2026-03-05&to=2026-03-01', headers: hq })
  t.same(reversed.json().errors, { to: ['must be after from'] })
  const many = await app.inject({ url: '/v1/hq/timeseries/sales_total?from=2026-01-01&to=2026-03-01&granularity=hour', headers: hq })
  t.same([many.statusCode, many.json().errors], [422, { granularity: ['the range has more than 100 hour buckets; use a coarser granularity or a shorter range'] }])
})

t.test('a CS 4xx answers 422 cs_query_failed with its status and body', async (t) => {
  const { app, cs, hq } = await csSetup(t)
  cs.setMode({ kind: 'fail', status: 400, body: '{"error":"unknown metric"}' })
  const res = await app.inject({ url: '/v1/hq/timeseries/sales_total?from=2026-03-01&to=2026-03-02', headers: hq })
  t.same([res.statusCode, res.json()], [422, {
    error: 'cs_query_failed', cs_status: 400, cs_body: '{"error":"unknown metric"}', message: 'The stream materialization service refused the query (400).',
  }])
})

t.test('a CS 5xx answers 502 cs_query_failed', async (t) => {
  const { app, cs, hq } = await csSetup(t)
  cs.setMode({ kind: 'fail', status: 503, body: 'maintenance' })
  const res = await app.inject({ url: '/v1/hq/timeseries/sales_total?from=2026-03-01&to=2026-03-02', headers: hq })
  t.same([res.statusCode, res.json()], [502, { error: 'cs_query_failed', cs_status: 503, cs_body: 'maintenance', message: 'The stream materialization service answered 503.' }])
})

t.test('a CS that never answers is cut off: 502 with cs_status 0', async (t) => {
  const { app, cs, hq } = await csSetup(t, { timeseries: { timeout_ms: 200 } })
  cs.setMode('stall')
  const res = await app.inject({ url: '/v1/hq/timeseries/sales_total?from=2026-03-01&to=2026-03-02', headers: hq })
  t.same([res.statusCode, res.json()], [502, { error: 'cs_query_failed', cs_status: 0, cs_body: '', message: 'The stream materialization service did not answer in time.' }])
})

t.test('an unreachable CS answers 502 with cs_status 0 and no address', async (t) => {
  const { app, cs, hq } = await csSetup(t)
  await cs.close()
  const res = await app.inject({ url: '/v1/hq/timeseries/sales_total?from=2026-03-01&to=2026-03-02', headers: hq })
  t.same([res.statusCode, res.json()], [502, { error: 'cs_query_failed', cs_status: 0, cs_body: '', message: 'The stream materialization service could not be reached.' }])
})

t.test('a malformed CS answer is a 502, not relayed', async (t) => {
  const { app, cs, hq } = await csSetup(t)
  cs.setMode({ kind: 'fail', status: 200, body: '{"rows":[]}' })
  const res = await app.inject({ url: '/v1/hq/timeseries/sales_total?from=2026-03-01&to=2026-03-02', headers: hq })
  t.same([res.statusCode, res.json()], [502, { error: 'cs_query_failed', cs_status: 200, cs_body: '{"rows":[]}', message: 'The stream materialization service answered with a malformed body.' }])
})
