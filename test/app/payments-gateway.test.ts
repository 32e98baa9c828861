import t from 'tap'
import { buildTestApp, getToken, type TestApp } from '../helpers/build-app.js'

/** The whole gateway on the demo gateway.yaml: auth → token-type → scope in front of the payments handlers. */
async function boot (t: { teardown (fn: () => unknown): void }): Promise<TestApp> {
  const gw = await buildTestApp()
  t.teardown(() => gw.close())
  return gw
}

const BASE = '/api/v1/ecommerce'
const bearer = (token: string, extra: Record<string, string> = {}) => ({ authorization: `Bearer ${token}`, ...extra })

t.test('checkout flow: create (with key) → replay → read → cancel, over the full chain', async (t) => {
  const { app } = await boot(t)
  const token = await getToken(app, 'demo-checkout')
  const body = { organization_id: 'org_store_001', amount: 1250, currency: 'USD', metadata: { order: 'A-1' } }
  const created = await app.inject({ method: 'POST', url: `${BASE}/payment-intents`, headers: bearer(token, { 'idempotency-key': 'A-1' }), payload: body })
  t.equal(created.statusCode, 201)
  t.equal(created.headers['x-ratelimit-limit'], '100')
  t.equal(created.headers['cache-control'], 'no-store')
  const intent = created.json().data
  t.same([intent.currency, intent.connected_account_id, intent.destination, intent.status], ['usd', 'acct_store_001', 'acct_1DemoStore001', 'requires_payment_method'])

  const replay = await app.inject({ method: 'POST', url: `${BASE}/payment-intents`, headers: bearer(token, { 'idempotency-key': 'A-1' }), payload: body })
  t.same([replay.statusCode, replay.headers['idempotent-replayed'], replay.json()], [201, 'true', created.json()])

  const read = await app.inject({ method: 'GET', url: `${BASE}/payment-intents/${intent.id as string}`, headers: bearer(token) })
  t.same(read.json(), created.json())

  const canceled = await app.inject({ method: 'POST', url: `${BASE}/payment-intents/${intent.id as string}/cancel`, headers: bearer(token), payload: { cancellation_reason: 'abandoned' } })
  t.equal(canceled.statusCode, 200)
  t.same([canceled.json().data.status, canceled.json().data.cancellation_reason], ['canceled', 'abandoned'])
})

t.test('a read-only account can check status but not create (403)', async (t) => {
  const { app } = await boot(t)
  const checkout = await getToken(app, 'demo-checkout')
  const status = await getToken(app, 'demo-status')
  const created = (await app.inject({ method: 'POST', url: `${BASE}/payment-intents`, headers: bearer(checkout), payload: { organization_id: 'org_hq_demo', amount: 1, currency: 'usd' } })).json()
  const read = await app.inject({ method: 'GET', url: `${BASE}/payment-intents/${created.data.id as string}`, headers: bearer(status) })
  t.equal(read.statusCode, 200)
  const denied = await app.inject({ method: 'POST', url: `${BASE}/payment-intents`, headers: bearer(status), payload: { organization_id: 'org_hq_demo', amount: 1, currency: 'usd' } })
  t.equal(denied.statusCode, 403)
  t.same(denied.json(), { success: false, message: 'This action requires the commerce:payment-intents.create scope.' })
})

t.test('E1: another HQ\'s account gets 404 for the intent and 403 for the organization', async (t) => {
  const { app } = await boot(t)
  const checkout = await getToken(app, 'demo-checkout')
  const other = await getToken(app, 'demo-other')
  const created = (await app.inject({ method: 'POST', url: `${BASE}/payment-intents`, headers: bearer(checkout), payload: { organization_id: 'org_hq_demo', amount: 1, currency: 'usd' } })).json()
  const read = await app.inject({ method: 'GET', url: `${BASE}/payment-intents/${created.data.id as string}`, headers: bearer(other) })
  t.equal(read.statusCode, 404)
  t.same(read.json(), { success: false, message: 'Payment intent not found.' })
  const cancel = await app.inject({ method: 'POST', url: `${BASE}/payment-intents/${created.data.id as string}/cancel`, headers: bearer(other) })
  t.equal(cancel.statusCode, 404)
  const create = await app.inject({ method: 'POST', url: `${BASE}/payment-intents`, headers: bearer(other), payload: { organization_id: 'org_hq_demo', amount: 1, currency: 'usd' } })
  t.equal(create.statusCode, 403)
  t.same(create.json(), { success: false, message: 'This organization is outside your organization\'s access.' })
  const lookup = await app.inject({ method: 'GET', url: `${BASE}/connected-account?organization_id=org_store_001`, headers: bearer(other) })
  t.equal(lookup.statusCode, 403)
})

t.test('no token → 401 in the payments envelope', async (t) => {
  const { app } = await boot(t)
  const res = await app.inject({ method: 'GET', url: `${BASE}/config/processor` })
  t.equal(res.statusCode, 401)
  t.same(res.json(), { success: false, message: 'Unauthenticated.' })
})

t.test('D1: 100 requests spread over the five payments routes count down one shared limit; the 101st is 429', async (t) => {
  const { app } = await boot(t)
  const token = await getToken(app, 'demo-checkout')
  const created = (await app.inject({ method: 'POST', url: `${BASE}/payment-intents`, headers: bearer(token), payload: { organization_id: 'org_hq_demo', amount: 1, currency: 'usd' } })).json()
  const id = created.data.id as string
  const requests = [
    { method: 'GET', url: `${BASE}/config/processor` },
    { method: 'POST', url: `${BASE}/payment-intents`, payload: { organization_id: 'org_hq_demo', amount: 1, currency: 'usd' } },
    { method: 'GET', url: `${BASE}/payment-intents/${id}` },
    { method: 'POST', url: `${BASE}/payment-intents/${id}/cancel` },
    { method: 'GET', url: `${BASE}/connected-account?organization_id=org_hq_demo` },
  ] as const
  const remaining: number[] = []
  for (let i = 1; i < 100; i++) {
    const r = requests[i % requests.length] as { method: 'GET' | 'POST', url: string, payload?: Record<string, unknown> }
    const res = await app.inject({ ...r, headers: bearer(token) })
    remaining.push(Number(res.headers['x-ratelimit-remaining']))
  }
  t.same(remaining, Array.from({ length: 99 }, (_, i) => 98 - i))
  const over = await app.inject({ method: 'GET', url: `${BASE}/config/processor`, headers: bearer(token) })
  t.equal(over.statusCode, 429)
  const retry = Number(over.headers['retry-after'])
  t.ok(retry >= 1 && retry <= 60, `Retry-After ${retry}`)
  t.same(over.json(), { error: 'Too many requests', retry_after: retry })
})

t.test('a crash after storing an intent but before recording its response does not make a second intent on retry', async (t) => {
  const { default: Database } = await import('better-sqlite3')
  const { join } = await import('node:path')
  const local = await buildTestApp()
  t.teardown(() => local.close())
  const token = await getToken(local.app, 'demo-checkout')
  const headers = { authorization: `Bearer ${token}`, 'idempotency-key': 'crash-window-1' }
  const payload = { organization_id: 'org_hq_demo', amount: 700, currency: 'usd' }
  const first = await local.app.inject({ method: 'POST', url: '/api/v1/ecommerce/payment-intents', headers, payload })
  t.equal(first.statusCode, 201)
  // Put the key back in the state a kill -9 between the two writes leaves: in progress, long abandoned.
  const db = new Database(join(local.dataDir, 'lanegate.db'))
  db.prepare(`UPDATE idempotency_keys SET state = 'in_progress', status_code = NULL, body = NULL, completed_at = NULL,
    created_at = created_at - 3600000 WHERE key = 'crash-window-1'`).run()
  db.close()
  const retry = await local.app.inject({ method: 'POST', url: '/api/v1/ecommerce/payment-intents', headers, payload })
  t.equal(retry.statusCode, 201)
  t.equal(retry.json().data.id, first.json().data.id, 'the retry answers with the intent the crashed request stored')
  const other = await local.app.inject({ method: 'POST', url: '/api/v1/ecommerce/payment-intents', headers: { ...headers, 'idempotency-key': 'crash-window-2' }, payload })
  t.not(other.json().data.id, first.json().data.id, 'another key makes another intent')
})

t.test('a crash after canceling but before recording the cancel\'s response: the keyed retry answers 200 with the canceled intent, not 409', async (t) => {
  const { default: Database } = await import('better-sqlite3')
  const { join } = await import('node:path')
  const local = await buildTestApp()
  t.teardown(() => local.close())
  const token = await getToken(local.app, 'demo-checkout')
  const created = (await local.app.inject({ method: 'POST', url: `${BASE}/payment-intents`, headers: bearer(token), payload: { organization_id: 'org_hq_demo', amount: 700, currency: 'usd' } })).json()
  const url = `${BASE}/payment-intents/${created.data.id as string}/cancel`
  const headers = bearer(token, { 'idempotency-key': 'cancel-crash-window' })
  const first = await local.app.inject({ method: 'POST', url, headers, payload: { cancellation_reason: 'abandoned' } })
  t.equal(first.statusCode, 200)
  // Put the key back in the state a kill -9 between the cancel and recording its answer leaves: in progress, long abandoned.
  const db = new Database(join(local.dataDir, 'lanegate.db'))
  db.prepare(`UPDATE idempotency_keys SET state = 'in_progress', status_code = NULL, body = NULL, completed_at = NULL,
    created_at = created_at - 3600000 WHERE key = 'cancel-crash-window'`).run()
  const events = () => (db.prepare('SELECT COUNT(*) AS n FROM payment_intent_events WHERE intent_id = ?').get(created.data.id) as { n: number }).n
  t.teardown(() => db.close())
  const retry = await local.app.inject({ method: 'POST', url, headers, payload: { cancellation_reason: 'abandoned' } })
  t.same([retry.statusCode, retry.headers['idempotent-replayed'], retry.json()], [200, undefined, first.json()])
  t.equal(events(), 2, 'one creation and one cancel event')
})
