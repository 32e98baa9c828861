import t, { type Test } from 'tap'
import payments from '../../src/services/payments/index.js'
import { guardStore } from '../../src/store/store-unavailable.js'
import type { Store } from '../../src/store/store.js'
import { caller, paymentsServiceConfig, postgresBackend, serviceTestConfig, sqliteBackend, type StoreBackend } from '../helpers/payments-config.js'
import { buildServiceModulesApp, type ServiceModulesApp } from '../helpers/service-modules-app.js'

// A keyed cancel whose state change committed but whose answer could not be remembered (the database failed at
// `idempotency.complete`) is answered 503 and its key released; the retry with the same key used to run the
// cancel again and answer 409 "cannot be canceled because its status is canceled" to a cancel that had worked.

const BASE = '/api/v1/ecommerce'

interface Harness {
  app: ServiceModulesApp['app']
  store: Store
  /** How many transitions actually changed an intent (the cancel's side effect). */
  applied: () => number
  /** Resolves when the failed request's key has been released. */
  released: Promise<void>
}

/** The payments app over `backend`, whose next `idempotency.complete` fails like an unavailable database. */
async function harness (t: Test, backend: StoreBackend): Promise<Harness> {
  const raw = await backend.open()
  let applied = 0
  let failNextComplete = true
  let onReleased!: () => void
  const released = new Promise<void>((resolve) => { onReleased = resolve })
  const unavailable = Object.assign(new Error('injected: database unavailable while saving the answer'), {
    code: backend.name === 'sqlite' ? 'SQLITE_IOERR' : '57P01',
  })
  const faulty: Store = {
    ...raw,
    ping: () => raw.ping(),
    close: () => raw.close(),
    payments: {
      ...raw.payments,
      transition: async (...args) => {
        const result = await raw.payments.transition(...args)
        if (result.outcome === 'updated') applied++
        return result
      },
    },
    idempotency: {
      ...raw.idempotency,
      complete: async (...args) => {
        if (failNextComplete) {
          failNextComplete = false
          throw unavailable
        }
        return raw.idempotency.complete(...args)
      },
      release: async (...args) => {
        await raw.idempotency.release(...args)
        onReleased()
      },
    },
  }
  const { app } = await buildServiceModulesApp(serviceTestConfig('payments', paymentsServiceConfig()), [payments], { store: guardStore(faulty) })
  t.teardown(async () => { await app.close(); await raw.close(); await backend.destroy() })
  return { app, store: raw, applied: () => applied, released }
}

async function createIntent ({ app }: Harness): Promise<Record<string, unknown>> {
  const res = await app.inject({ method: 'POST', url: `${BASE}/payment-intents`, headers: caller('org_hq'), payload: { organization_id: 'org_hq', amount: 1200, currency: 'usd' } })
  return res.json().data as Record<string, unknown>
}

function cancel ({ app }: Harness, id: string, key?: string) {
  return app.inject({
    method: 'POST',
    url: `${BASE}/payment-intents/${id}/cancel`,
    headers: caller('org_hq', key === undefined ? {} : { 'idempotency-key': key }),
    payload: { cancellation_reason: 'requested_by_customer' },
  })
}

function suite (t: Test, open: () => Promise<StoreBackend>): void {
  t.test('a keyed cancel retried after the database failed while saving its answer cancels once and answers 200 with the canceled intent', async (t) => {
    const h = await harness(t, await open())
    const intent = await createIntent(h)
    const id = intent.id as string

    const first = await cancel(h, id, 'cancel-save-fails')
    t.same([first.statusCode, first.headers['retry-after'], first.json()], [503, '2', { success: false, message: 'The database is unavailable; retry shortly.' }])
    await h.released

    const retry = await cancel(h, id, 'cancel-save-fails')
    const stored = await h.store.payments.get(id, new Set(['org_hq']))
    const canceledAt = new Date(stored?.canceledAt as number).toISOString()
    t.same([retry.statusCode, retry.headers['idempotent-replayed'], retry.json()], [200, undefined, {
      success: true,
      data: { ...intent, status: 'canceled', canceled_at: canceledAt, cancellation_reason: 'requested_by_customer' },
    }], 'the retry answers what the first attempt would have')
    t.equal(h.applied(), 1, 'the cancel changed the intent exactly once')
    t.same((await h.store.payments.events(id)).map((e) => [e.fromStatus, e.toStatus]),
      [[null, 'requires_payment_method'], ['requires_payment_method', 'canceled']], 'one cancel event')

    const replay = await cancel(h, id, 'cancel-save-fails')
    t.same([replay.statusCode, replay.headers['idempotent-replayed'], replay.json()], [200, 'true', retry.json()], 'the retry\'s answer is remembered')
    t.equal(h.applied(), 1)
  })

  t.test('after such a failure, a retry without the key (or with another key) answers 409 with status canceled and changes nothing', async (t) => {
    const h = await harness(t, await open())
    const id = (await createIntent(h)).id as string
    t.equal((await cancel(h, id, 'cancel-save-fails')).statusCode, 503)
    await h.released
    const conflict = { success: false, message: 'The payment intent cannot be canceled because its status is canceled.', status: 'canceled' }
    for (const key of [undefined, 'another-key']) {
      const retry = await cancel(h, id, key)
      t.same([retry.statusCode, retry.json()], [409, conflict], `key ${String(key)}`)
    }
    t.equal(h.applied(), 1, 'the cancel changed the intent exactly once')
    t.equal((await h.store.payments.events(id)).length, 2)
  })
}

t.test('sqlite', async (t) => {
  suite(t, sqliteBackend)
})

t.test('postgres', async (t) => {
  const probe = await postgresBackend()
  if (typeof probe === 'string') {
    t.test('cancel retry', { skip: `${probe} (set LANEGATE_REQUIRE_SERVICES=1 to fail instead)` }, async () => {})
    return
  }
  await probe.destroy()
  suite(t, async () => await postgresBackend() as StoreBackend)
})
