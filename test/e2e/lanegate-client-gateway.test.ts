import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { LanegateClient, LanegateError, isLanegateError, type LanegateErrorCode } from '../../src/client/index.js'
import { spawnGateway, type SpawnedGateway } from '../helpers/spawn-gateway.js'
import { answerQuery, startCsSimulator, type CsSimulator } from '../simulators/cs-simulator.js'
import { startLaneSimulator, type LaneSimulator } from '../simulators/lane-simulator.js'

// Every typed method once against a real `lanegate start` (the demo gateway.yaml) with the lane and stream
// materialization simulators, and the errors an integrator meets, by code.

let gw: SpawnedGateway
let dataDir: string
let lanes: LaneSimulator[]
let cs: CsSimulator

t.before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'lanegate-client-'))
  lanes = [await startLaneSimulator({ name: 'lane-001' }), await startLaneSimulator({ name: 'lane-002' }), await startLaneSimulator({ name: 'lane-900' })]
  cs = await startCsSimulator()
  gw = await spawnGateway({ env: { LANEGATE_DATA_DIR: dataDir, LANE_001_URL: lanes[0].url, LANE_002_URL: lanes[1].url, LANE_900_URL: lanes[2].url, CS_URL: cs.url } })
})
t.teardown(async () => {
  gw.child.kill('SIGTERM')
  await gw.exited
  for (const lane of lanes) await lane.close()
  await cs.close()
  await rm(dataDir, { recursive: true, force: true })
})

/** A client of the spawned gateway (demo secrets are `<client_id>-secret`). */
function clientFor (clientId: string, extra: { scope?: string, clientSecret?: string } = {}): LanegateClient {
  return new LanegateClient({ baseUrl: gw.base, clientId, clientSecret: `${clientId}-secret`, retry: { maxAttempts: 1 }, userAgent: 'lanegate-client-test', ...extra })
}

/** The code of what `promise` threw, with its status ("no error" when it resolved). */
async function failure (promise: Promise<unknown>): Promise<{ status: number, code: LanegateErrorCode } | string> {
  try {
    await promise
    return 'no error'
  } catch (error) {
    return error instanceof LanegateError ? { status: error.status, code: error.code } : String(error)
  }
}

t.test('payments: every method once', async (t) => {
  const client = clientFor('demo-checkout')
  t.same(await client.payments.processorConfig(), { processor: 'stripe', publishable_key: 'pk_test_demo_lanegate', mode: 'test' })
  t.same(await client.payments.connectedAccount('org_hq_demo'), { connected_account_id: 'acct_hq_demo', organization_id: 'org_hq_demo', processor_account_id: 'acct_1DemoHqProcessor' })
  const created = await client.payments.createIntent({ amount: 1250, currency: 'USD', organization_id: 'org_store_001', metadata: { order: 'o-1' } })
  t.match(created, { amount: 1250, currency: 'usd', status: 'requires_payment_method', organization_id: 'org_store_001', connected_account_id: 'acct_store_001', destination: 'acct_1DemoStore001', metadata: { order: 'o-1' }, canceled_at: null })
  t.same(await client.payments.getIntent(created.id), created)
  const canceled = await client.payments.cancelIntent(created.id, { cancellationReason: 'requested_by_customer' })
  t.same({ status: canceled.status, reason: canceled.cancellation_reason }, { status: 'canceled', reason: 'requested_by_customer' })
})

t.test('payments: a given Idempotency-Key replays the first intent', async (t) => {
  const client = clientFor('demo-checkout')
  const input = { amount: 500, currency: 'eur', organization_id: 'org_hq_demo' } as const
  const first = await client.payments.createIntent(input, { idempotencyKey: `client-e2e-${Date.now()}` })
  const again = await client.payments.createIntent(input, { idempotencyKey: `client-e2e-${first.created_at}` })
  t.not(again.id, first.id, 'another key, another intent')
  const key = `client-e2e-replay-${first.id}`
  const a = await client.payments.createIntent(input, { idempotencyKey: key })
  const b = await client.payments.createIntent(input, { idempotencyKey: key })
  t.equal(b.id, a.id)
})

t.test('payments: errors by code', async (t) => {
  const client = clientFor('demo-checkout')
  const intent = await client.payments.createIntent({ amount: 100, currency: 'usd', organization_id: 'org_hq_demo' })
  await client.payments.cancelIntent(intent.id)
  t.same(await Promise.all([
    failure(client.payments.getIntent('pi_01JNOTHERE0000000000000000')),
    failure(client.payments.cancelIntent(intent.id)),
    failure(client.payments.connectedAccount('org_other_hq')),
    failure(client.payments.connectedAccount('org_store_002')),
    failure(client.payments.createIntent({ amount: -1, currency: 'usd', organization_id: 'org_hq_demo' })),
    failure(client.payments.createIntent({ amount: 1, currency: 'usd', organization_id: 'org_hq_demo' }, { idempotencyKey: 'k'.repeat(256) })),
    failure(clientFor('demo-status').payments.createIntent({ amount: 1, currency: 'usd', organization_id: 'org_hq_demo' })),
  ]), [
    { status: 404, code: 'payment_intent_not_found' },
    { status: 409, code: 'payment_intent_not_cancelable' },
    { status: 403, code: 'forbidden' },
    { status: 404, code: 'connected_account_not_found' },
    { status: 422, code: 'validation_failed' },
    { status: 400, code: 'idempotency_key_invalid' },
    { status: 403, code: 'forbidden' },
  ])
})

t.test('content: list, circulars and the paging helpers', async (t) => {
  const client = clientFor('demo-content')
  const page = await client.content.list({ perPage: 100 })
  t.ok(page.data.length >= 2, `${page.data.length} items`)
  t.same(page.meta, { page: 1, per_page: 100, total: page.data.length, total_pages: 1 })
  const walked = []
  for await (const item of client.content.listAll({ perPage: 1 })) walked.push(item.id)
  t.same(walked, page.data.map((i) => i.id))
  const circulars = await client.content.circulars({ perPage: 100 })
  t.ok(circulars.data.length >= 1, `${circulars.data.length} circulars`)
  const allCirculars = []
  for await (const item of client.content.allCirculars({ perPage: 1 })) allCirculars.push(item.id)
  t.same(allCirculars, circulars.data.map((i) => i.id))
})

t.test('content: errors by code', async (t) => {
  t.same(await Promise.all([
    failure(clientFor('demo-content', { scope: 'engage:content.view' }).content.circulars()),
    failure(clientFor('demo-content').content.list({ perPage: 1000 })),
    failure(clientFor('demo-checkout').content.list()),
  ]), [
    { status: 403, code: 'forbidden' },
    { status: 422, code: 'validation_failed' },
    { status: 403, code: 'forbidden' },
  ])
})

t.test('live: get, post, put, patch and delete reach the store\'s lane', async (t) => {
  const live = clientFor('demo-exchange').live
  const answers = [
    await live.get('org_store_001', 'items/42', { query: { fields: 'price' } }),
    await live.post('org_store_001', '/orders', { sku: '1' }),
    await live.put('org_store_002', 'items/7', 'price=1', { contentType: 'text/plain' }),
    await live.patch('org_store_002', 'items/7', { price: '2.00' }),
    await live.delete('org_store_001', 'items/a b'),
  ]
  t.same(answers.map((a) => a.status), [200, 200, 200, 200, 200])
  t.same(answers.map((a) => { const b = a.body as { lane: string, method: string, url: string, body: string }; return [b.lane, b.method, b.url, b.body] }), [
    ['lane-001', 'GET', '/items/42?fields=price', ''],
    ['lane-001', 'POST', '/orders', '{"sku":"1"}'],
    ['lane-002', 'PUT', '/items/7', 'price=1'],
    ['lane-002', 'PATCH', '/items/7', '{"price":"2.00"}'],
    ['lane-001', 'DELETE', '/items/a%20b', ''],
  ])
})

t.test('live: errors by code', async (t) => {
  const live = clientFor('demo-exchange').live
  t.same(await Promise.all([
    failure(live.get('org_store_900', 'items')),
    failure(live.get('org_store_002', '__sim/status/409')),
    failure(clientFor('demo-exchange', { scope: 'exchange:live.read' }).live.post('org_store_001', 'items', {})),
  ]), [
    { status: 404, code: 'store_not_found' },
    { status: 409, code: 'upstream_error' },
    { status: 403, code: 'forbidden' },
  ])
})

t.test('timeseries.query and reports.run read the stream materialization', async (t) => {
  const client = clientFor('demo-exchange')
  const series = await client.timeseries.query('sales_total', { from: '2026-11-01', to: '2026-11-03', storeOrgIds: ['org_store_001'], granularity: 'day' })
  const expected = answerQuery({ metric: 'sales_total', stores: ['org_store_001'], from: series.from, to: series.to, granularity: 'day' })
  t.same(series.series, expected.series)
  t.equal(series.series[0]?.points.length, 3)
  const registry = await client.reports.list()
  t.same(registry.map((r) => r.report_id).sort(), ['sales.by_department', 'sales.daily_totals'])
  const described = await client.reports.get('sales.daily_totals')
  t.same(described.parameter_schema.required, ['from', 'to'])
  const report = await client.reports.run('sales.daily_totals', { from: '2026-11-01', to: '2026-11-02' })
  t.same({ id: report.report_id, columns: report.columns, rows: report.rows.length }, { id: 'sales.daily_totals', columns: ['date', 'sales_total', 'transactions', 'items_sold'], rows: 2 })
  t.same(await Promise.all([
    failure(client.timeseries.query('sales_total', { from: '2026-11-01', to: '2026-11-03', storeOrgIds: ['org_store_900'] })),
    failure(client.timeseries.query('sales_total', { from: '2026-11-03', to: '2026-11-01' })),
    failure(client.reports.run('sales.nope')),
    failure(client.reports.run('sales.daily_totals', { from: 'yesterday' })),
    failure(client.reports.get('sales.nope')),
  ]), [
    { status: 404, code: 'store_not_found' },
    { status: 422, code: 'validation_failed' },
    { status: 404, code: 'report_not_found' },
    { status: 422, code: 'report_param_validation_failed' },
    { status: 404, code: 'report_not_found' },
  ])
})

t.test('fanout: preview, get, commit; a second commit is fanout_not_previewed', async (t) => {
  const fanout = clientFor('demo-exchange').fanout
  const preview = await fanout.preview({ operation_type: 'price-change', payload: { product_code: '0001234', retail_price: '3.49' }, store_org_ids: ['org_store_001', 'org_store_002'] })
  t.equal(preview.status, 'previewed')
  t.same(preview.stores.map((s) => [s.store_org_id, s.preview.status]), [['org_store_001', 'ok'], ['org_store_002', 'ok']])
  t.match(await fanout.get(preview.dispatch_id), { dispatch_id: preview.dispatch_id, status: 'previewed', committed_at: null })
  const committed = await fanout.commit(preview.dispatch_id)
  t.equal(committed.status, 'committed')
  t.same(committed.stores.map((s) => s.delivery?.status), ['applied', 'applied'])
  t.equal(lanes[0].appliedCount(`${preview.dispatch_id}:org_store_001`), 1)
  const again = await fanout.commit(preview.dispatch_id).then(() => undefined, (e: unknown) => e)
  t.ok(isLanegateError(again, 'fanout_not_previewed'))
  if (isLanegateError(again, 'fanout_not_previewed')) t.same(again.body, { error: 'fanout_not_previewed', dispatch_id: preview.dispatch_id, status: 'committed', message: `Dispatch ${preview.dispatch_id} is committed; only a previewed dispatch can be committed, once.` })
})

t.test('fanout: errors by code', async (t) => {
  const fanout = clientFor('demo-exchange').fanout
  t.same(await Promise.all([
    failure(fanout.get('01JDISPATCHNOTHERE00000000')),
    failure(fanout.preview({ operation_type: 'nope', payload: {}, store_org_ids: ['org_store_001'] })),
    failure(fanout.preview({ operation_type: 'price-change', payload: { product_code: 'x' }, store_org_ids: ['org_store_001'] })),
    failure(fanout.preview({ operation_type: 'price-change', payload: { product_code: '1', retail_price: '1.00' }, store_org_ids: ['org_store_900'] })),
  ]), [
    { status: 404, code: 'fanout_dispatch_not_found' },
    { status: 404, code: 'fanout_operation_not_found' },
    { status: 422, code: 'fanout_payload_validation_failed' },
    { status: 422, code: 'fanout_store_out_of_scope' },
  ])
})

t.test('hostfile.author renders records; an unknown record type is hostfile_unknown_record_type', async (t) => {
  const hostfile = clientFor('demo-exchange').hostfile
  const file = await hostfile.author({ records: [{ record_type: 'Department', action_code: 'A', department_code: '12', description: 'Bakery' }], file_name: 'dept.txt' })
  t.match(file, { file_name: 'dept.txt', format: 'pipe-delimited/v1', content: 'Department|A|12|Bakery|\n', record_counts: { Department: 1 }, total_records: 1 })
  t.match(file.checksum, /^[0-9a-f]{64}$/)
  t.same(await failure(hostfile.author({ records: [{ record_type: 'Nope', action_code: 'A' }] })), { status: 422, code: 'hostfile_unknown_record_type' })
})

t.test('the token endpoint: a wrong secret is invalid_client, a scope not granted is invalid_scope', async (t) => {
  t.same(await Promise.all([
    failure(clientFor('demo-content', { clientSecret: 'wrong-secret-value' }).content.list()),
    failure(clientFor('demo-revoked').payments.processorConfig()),
    failure(clientFor('demo-content', { scope: 'engage:content.create' }).content.list()),
  ]), [
    { status: 401, code: 'invalid_client' },
    { status: 401, code: 'invalid_client' },
    { status: 400, code: 'invalid_scope' },
  ])
})

t.test('one token serves many calls', async (t) => {
  const client = clientFor('demo-content')
  await Promise.all(Array.from({ length: 20 }, () => client.content.list()))
  t.equal(client.tokens.tokensFetched, 1)
})

t.test('a thrown error carries the gateway\'s request id', async (t) => {
  const error = await clientFor('demo-exchange').live.get('org_store_900', 'items', { headers: { 'x-request-id': 'client-e2e-request-1' } }).then(() => undefined, (e: unknown) => e)
  t.ok(isLanegateError(error, 'store_not_found'))
  t.same({ requestId: (error as LanegateError).requestId, body: (error as LanegateError).body }, { requestId: 'client-e2e-request-1', body: { error: 'store_not_found', store_org_id: 'org_store_900', message: 'Store not found or not accessible.' } })
})

t.test('a token the gateway refuses (401) is replaced once and the call goes through', async (t) => {
  let tokenRequests = 0
  let tampered = 0
  // The first API request carries a token this gateway never signed, as after a key rotation.
  const fetchOnce: typeof fetch = async (input, init) => {
    const headers = new Headers(init?.headers)
    if (String(input).endsWith('/oauth/token')) tokenRequests++
    else if (tampered++ === 0) headers.set('authorization', 'Bearer eyJhbGciOiJFZERTQSJ9.e30.c2ln')
    return await fetch(input, { ...init, headers })
  }
  const client = new LanegateClient({ baseUrl: gw.base, clientId: 'demo-content', clientSecret: 'demo-content-secret', fetch: fetchOnce })
  const page = await client.content.list({ perPage: 1 })
  t.equal(page.meta.page, 1)
  t.same({ tokenRequests, apiRequests: tampered }, { tokenRequests: 2, apiRequests: 2 })
})
