import t from 'tap'
import { startLaneSimulator, type LaneSimulator } from '../simulators/lane-simulator.js'
import { startCsSimulator, type CsSimulator } from '../simulators/cs-simulator.js'
import { buildTestApp, getToken, type TestApp } from '../helpers/build-app.js'

// The demo gateway.yaml with its real policy chains, lanes and timeseries source on real sockets: what a
// newcomer gets after `npm run simulators && npm start`.
let gw: TestApp
let lanes: Record<'l001' | 'l002' | 'l900', LaneSimulator>
let cs: CsSimulator
let base: string
let exchange: string
let other: string

t.before(async () => {
  lanes = {
    l001: await startLaneSimulator({ name: 'lane-001' }),
    l002: await startLaneSimulator({ name: 'lane-002' }),
    l900: await startLaneSimulator({ name: 'lane-900' }),
  }
  cs = await startCsSimulator()
  gw = await buildTestApp({ env: { LANE_001_URL: lanes.l001.url, LANE_002_URL: lanes.l002.url, LANE_900_URL: lanes.l900.url, CS_URL: cs.url } })
  await gw.app.listen({ port: 0, host: '127.0.0.1' })
  base = `http://127.0.0.1:${(gw.app.server.address() as { port: number }).port}`
  exchange = await getToken(gw.app, 'demo-exchange')
  other = await getToken(gw.app, 'demo-other')
})
t.teardown(async () => {
  await gw.close()
  for (const lane of Object.values(lanes)) await lane.close()
  await cs.close()
})

const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` })
const laneRequests = (): number => Object.values(lanes).reduce((n, l) => n + l.requests.length, 0)

t.test('a live read is relayed with the lane credential and never the caller\'s token', async (t) => {
  const res = await fetch(`${base}/v1/stores/org_store_001/live/items/42?fields=price`, { headers: { ...bearer(exchange), cookie: 'sid=1', 'x-forwarded-for': '6.6.6.6' } })
  t.equal(res.status, 200)
  const echo = await res.json() as { method: string, url: string, headers: Record<string, string> }
  t.equal(echo.method, 'GET')
  t.equal(echo.url, '/items/42?fields=price')
  t.equal(echo.headers.authorization, 'demo-lane-001-credential')
  t.notOk(echo.headers.cookie)
  t.equal(echo.headers['x-forwarded-for'], '127.0.0.1')
  t.notOk(JSON.stringify(lanes.l001.requests).includes(exchange), 'the token reached no lane')
  t.equal(res.headers.get('x-ratelimit-limit'), '600')
})

t.test('another organization\'s store, an unknown store and a store id trick all answer the same 404; no lane is contacted', async (t) => {
  const before = laneRequests()
  const bodies = []
  for (const [token, store] of [[other, 'org_store_001'], [exchange, 'org_store_900'], [exchange, 'org_store_404']] as const) {
    const res = await fetch(`${base}/v1/stores/${store}/live/items`, { headers: bearer(token) })
    t.equal(res.status, 404)
    bodies.push([store, await res.json()])
  }
  t.same(bodies, [
    ['org_store_001', { error: 'store_not_found', store_org_id: 'org_store_001', message: 'Store not found or not accessible.' }],
    ['org_store_900', { error: 'store_not_found', store_org_id: 'org_store_900', message: 'Store not found or not accessible.' }],
    ['org_store_404', { error: 'store_not_found', store_org_id: 'org_store_404', message: 'Store not found or not accessible.' }],
  ])
  const write = await fetch(`${base}/v1/stores/org_store_001/live/items`, { method: 'POST', headers: { ...bearer(other), 'content-type': 'application/json' }, body: '{"a":1}' })
  t.equal(write.status, 404)
  t.equal(laneRequests(), before, 'zero requests reached a lane')
})

t.test('a lane failure is mirrored as upstream_error through the whole chain', async (t) => {
  const res = await fetch(`${base}/v1/stores/org_store_002/live/__sim/status/409`, { headers: bearer(exchange) })
  t.equal(res.status, 409)
  const body = await res.json() as Record<string, unknown>
  t.equal(body.error, 'upstream_error')
  t.equal(body.upstream_status, 409)
  t.type(body.upstream_body, 'string')
})

t.test('without the write scope a live write is 403 Forbidden', async (t) => {
  const readOnly = await getToken(gw.app, 'demo-exchange', 'exchange:live.read')
  const res = await fetch(`${base}/v1/stores/org_store_001/live/items`, { method: 'POST', headers: { ...bearer(readOnly), 'content-type': 'application/json' }, body: '{}' })
  t.equal(res.status, 403)
  t.same(await res.json(), { error: 'Forbidden.' })
})

t.test('fan-out: preview then commit applies once per lane; a foreign store rejects the whole request', async (t) => {
  const request = { operation_type: 'price-change', payload: { product_code: '0001234', retail_price: '3.49' }, store_org_ids: ['org_store_001', 'org_store_002'] }
  const preview = await fetch(`${base}/v1/fanout/preview`, { method: 'POST', headers: { ...bearer(exchange), 'content-type': 'application/json' }, body: JSON.stringify(request) })
  t.equal(preview.status, 200)
  const dispatch = await preview.json() as { dispatch_id: string, status: string }
  t.equal(dispatch.status, 'previewed')
  t.match(dispatch.dispatch_id, /^[0-9A-HJKMNP-TV-Z]{26}$/)
  const commit = await fetch(`${base}/v1/fanout/dispatches/${dispatch.dispatch_id}/commit`, { method: 'POST', headers: bearer(exchange) })
  t.equal(commit.status, 200)
  t.equal((await commit.json() as { status: string }).status, 'committed')
  t.equal(lanes.l001.appliedCount(`${dispatch.dispatch_id}:org_store_001`), 1)
  t.equal(lanes.l002.appliedCount(`${dispatch.dispatch_id}:org_store_002`), 1)
  const again = await fetch(`${base}/v1/fanout/dispatches/${dispatch.dispatch_id}/commit`, { method: 'POST', headers: bearer(exchange) })
  t.equal(again.status, 409)
  t.same(await again.json(), { error: 'fanout_not_previewed', dispatch_id: dispatch.dispatch_id, status: 'committed', message: `Dispatch ${dispatch.dispatch_id} is committed; only a previewed dispatch can be committed, once.` })
  const foreign = await fetch(`${base}/v1/fanout/dispatches/${dispatch.dispatch_id}`, { headers: bearer(other) })
  t.equal(foreign.status, 404)

  const mixed = await fetch(`${base}/v1/fanout/preview`, { method: 'POST', headers: { ...bearer(other), 'content-type': 'application/json' }, body: JSON.stringify({ ...request, store_org_ids: ['org_store_900', 'org_store_001', 'org_store_002'] }) })
  t.equal(mixed.status, 422)
  const body = await mixed.json() as Record<string, unknown>
  t.equal(body.error, 'fanout_store_out_of_scope')
  t.same(body.offending_stores, ['org_store_001', 'org_store_002'])
})

t.test('timeseries and reports read the stream materialization through the chain', async (t) => {
  const series = await fetch(`${base}/v1/hq/timeseries/sales_total?store_org_id=org_store_001&from=2026-11-01&to=2026-11-03&granularity=day`, { headers: bearer(exchange) })
  t.equal(series.status, 200)
  const data = await series.json() as { series: { store_org_id: string, points: unknown[] }[] }
  t.same(data.series.map((s) => s.store_org_id), ['org_store_001'])
  t.equal(data.series[0]?.points.length, 3)
  const foreign = await fetch(`${base}/v1/hq/timeseries/sales_total?store_org_id=org_store_900&from=2026-11-01&to=2026-11-03&granularity=day`, { headers: bearer(exchange) })
  t.equal(foreign.status, 404)
  t.equal((await foreign.json() as { error: string }).error, 'store_not_found')
  const report = await fetch(`${base}/v1/reports/sales.daily_totals/run`, { method: 'POST', headers: { ...bearer(exchange), 'content-type': 'application/json' }, body: JSON.stringify({ from: '2026-11-01', to: '2026-11-02' }) })
  t.equal(report.status, 200)
  t.equal((await report.json() as { report_id: string }).report_id, 'sales.daily_totals')
  const unknown = await fetch(`${base}/v1/reports/sales.nope/run`, { method: 'POST', headers: { ...bearer(exchange), 'content-type': 'application/json' }, body: '{}' })
  t.equal(unknown.status, 404)
  t.same(await unknown.json(), { error: 'report_not_found', report_id: 'sales.nope', message: 'Report not found.' })
})
