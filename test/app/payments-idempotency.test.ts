import t from 'tap'
import type { Store } from '../../src/store/store.js'
import { buildPaymentsApp, caller, paymentsServiceConfig, serviceTestConfig, sqliteBackend } from '../helpers/payments-config.js'
import { buildServiceModulesApp } from '../helpers/service-modules-app.js'
import payments from '../../src/services/payments/index.js'

const BASE = '/api/v1/ecommerce'
const BODY = { organization_id: 'org_hq', amount: 2500, currency: 'usd', metadata: { cart: 'c1', user: 'u1' } }

function post (app: Awaited<ReturnType<typeof buildPaymentsApp>>['app'], key: string | undefined, payload: unknown, org = 'org_hq', client?: string, url = `${BASE}/payment-intents`) {
  return app.inject({ method: 'POST', url, headers: caller(org, key === undefined ? {} : { 'idempotency-key': key }, client), payload: payload as Record<string, unknown> })
}

t.test('same key and body → the first response replayed with Idempotent-Replayed: true, one intent', async (t) => {
  const { app } = await buildPaymentsApp(t)
  const first = await post(app, 'order-1', BODY)
  t.equal(first.statusCode, 201)
  t.equal(first.headers['idempotent-replayed'], undefined)
  // Same body with keys in another order: the canonical fingerprint matches.
  const again = await post(app, 'order-1', { metadata: { user: 'u1', cart: 'c1' }, currency: 'usd', amount: 2500, organization_id: 'org_hq' })
  t.equal(again.statusCode, 201)
  t.equal(again.headers['idempotent-replayed'], 'true')
  t.same(again.json(), first.json())
})

t.test('same key, different body → 422 idempotency_key_reused', async (t) => {
  const { app } = await buildPaymentsApp(t)
  await post(app, 'order-2', BODY)
  const res = await post(app, 'order-2', { ...BODY, amount: 2600 })
  t.equal(res.statusCode, 422)
  t.same(res.json(), { success: false, message: 'This Idempotency-Key was already used with a different request body.' })
})

t.test('same key while the first request is still running → 409 idempotency_key_in_use; then the replay', async (t) => {
  let release!: () => void
  const gate = new Promise<void>((resolve) => { release = resolve })
  let entered!: () => void
  const running = new Promise<void>((resolve) => { entered = resolve })
  const slow = (store: Store): Store => ({
    ...store,
    close: () => store.close(),
    payments: { ...store.payments, create: async (intent) => { entered(); await gate; return store.payments.create(intent) } },
  })
  const { app } = await buildPaymentsApp(t, { wrap: slow })
  const first = post(app, 'order-3', BODY)
  await running
  const second = await post(app, 'order-3', BODY)
  t.equal(second.statusCode, 409)
  t.same(second.json(), { success: false, message: 'A request with this Idempotency-Key is still being processed; retry later.' })
  release()
  const firstRes = await first
  t.equal(firstRes.statusCode, 201)
  const third = await post(app, 'order-3', BODY)
  t.same([third.statusCode, third.headers['idempotent-replayed'], third.json()], [201, 'true', firstRes.json()])
})

t.test('keys are scoped per client id: another client with the same key creates its own intent', async (t) => {
  const { app } = await buildPaymentsApp(t)
  const a = await post(app, 'shared-key', BODY, 'org_hq', 'client-a')
  const b = await post(app, 'shared-key', BODY, 'org_hq', 'client-b')
  t.same([a.statusCode, b.statusCode, b.headers['idempotent-replayed']], [201, 201, undefined])
  t.not(a.json().data.id, b.json().data.id)
})

t.test('a validation failure is not stored: the corrected retry with the same key succeeds', async (t) => {
  const { app } = await buildPaymentsApp(t)
  const bad = await post(app, 'order-4', { ...BODY, amount: -1 })
  t.equal(bad.statusCode, 422)
  const fixed = await post(app, 'order-4', BODY)
  t.same([fixed.statusCode, fixed.headers['idempotent-replayed']], [201, undefined])
})

t.test('a 403 is not stored either: the same request again is re-evaluated (403 again, not a replay)', async (t) => {
  const { app } = await buildPaymentsApp(t)
  const first = await post(app, 'order-5', { ...BODY, organization_id: 'org_other' })
  const second = await post(app, 'order-5', { ...BODY, organization_id: 'org_other' })
  t.same([first.statusCode, second.statusCode, second.headers['idempotent-replayed']], [403, 403, undefined])
})

t.test('invalid Idempotency-Key → 400 before anything runs', async (t) => {
  const { app } = await buildPaymentsApp(t)
  for (const key of ['x'.repeat(256), 'caf\u00e9', '']) {
    const res = await app.inject({ method: 'POST', url: `${BASE}/payment-intents`, headers: { ...caller('org_hq'), 'idempotency-key': Buffer.from(key, 'utf8').toString('latin1') }, payload: BODY })
    t.equal(res.statusCode, 400, JSON.stringify(key.slice(0, 10)))
    t.same(res.json(), { success: false, message: 'Idempotency-Key must be 1 to 255 printable ASCII characters.' })
  }
  t.equal((await post(app, 'k'.repeat(255), BODY)).statusCode, 201, 'a 255-character key is accepted')
})

t.test('cancel: a replay returns the first 200; the key reused for another intent is a mismatch', async (t) => {
  const { app } = await buildPaymentsApp(t)
  const one = (await post(app, undefined, BODY)).json().data.id as string
  const two = (await post(app, undefined, BODY)).json().data.id as string
  const first = await post(app, 'cancel-1', { cancellation_reason: 'duplicate' }, 'org_hq', undefined, `${BASE}/payment-intents/${one}/cancel`)
  t.equal(first.statusCode, 200)
  const again = await post(app, 'cancel-1', { cancellation_reason: 'duplicate' }, 'org_hq', undefined, `${BASE}/payment-intents/${one}/cancel`)
  t.same([again.statusCode, again.headers['idempotent-replayed'], again.json()], [200, 'true', first.json()])
  const other = await post(app, 'cancel-1', { cancellation_reason: 'duplicate' }, 'org_hq', undefined, `${BASE}/payment-intents/${two}/cancel`)
  t.equal(other.statusCode, 422)
  t.same(other.json(), { success: false, message: 'This Idempotency-Key was already used with a different request body.' })
})

t.test('keys survive a restart: a new app over the same SQLite file replays the response', async (t) => {
  const backend = await sqliteBackend()
  t.teardown(() => backend.destroy())
  const firstStore = await backend.open()
  const firstApp = (await buildServiceModulesApp(serviceTestConfig('payments', paymentsServiceConfig()), [payments], { store: firstStore })).app
  const created = await post(firstApp, 'order-6', BODY)
  await firstApp.close()
  await firstStore.close()

  const store = await backend.open()
  const { app } = await buildServiceModulesApp(serviceTestConfig('payments', paymentsServiceConfig()), [payments], { store })
  t.teardown(async () => { await app.close(); await store.close() })
  const replay = await post(app, 'order-6', BODY)
  t.same([replay.statusCode, replay.headers['idempotent-replayed'], replay.json()], [201, 'true', created.json()])
})

t.test('50 concurrent creates with one key → one intent; the others are 409 or replays of it', async (t) => {
  const { app } = await buildPaymentsApp(t)
  const results = await Promise.all(Array.from({ length: 50 }, () => post(app, 'burst', BODY)))
  const created = results.filter((r) => r.statusCode === 201)
  const ids = new Set(created.map((r) => r.json().data.id as string))
  t.equal(ids.size, 1)
  t.equal(created.filter((r) => r.headers['idempotent-replayed'] === undefined).length, 1)
  t.ok(results.every((r) => r.statusCode === 201 || r.statusCode === 409))
})
