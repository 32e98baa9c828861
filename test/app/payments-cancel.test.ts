import t from 'tap'
import type { PaymentIntentStatus } from '../../src/store/store.js'
import { buildPaymentsApp, caller, type PaymentsTestApp } from '../helpers/payments-config.js'

const BASE = '/api/v1/ecommerce'

async function createIntent ({ app }: PaymentsTestApp, org = 'org_hq'): Promise<Record<string, unknown>> {
  const res = await app.inject({ method: 'POST', url: `${BASE}/payment-intents`, headers: caller(org), payload: { organization_id: org, amount: 1200, currency: 'usd' } })
  return res.json().data
}

/** Moves an intent the way only the processor could (tests set states directly in the store). */
async function force ({ store }: PaymentsTestApp, id: string, to: PaymentIntentStatus): Promise<void> {
  const result = await store.payments.transition(id, new Set(['org_hq']), { from: ['requires_payment_method'], to, at: Date.now() })
  if (result.outcome !== 'updated') throw new Error(`could not force ${id} to ${to}`)
}

function cancel ({ app }: PaymentsTestApp, id: string, payload?: Record<string, unknown>, org = 'org_hq') {
  return app.inject({ method: 'POST', url: `${BASE}/payment-intents/${id}/cancel`, headers: caller(org), ...(payload === undefined ? {} : { payload }) })
}

const cancelable: PaymentIntentStatus[] = ['requires_payment_method', 'requires_confirmation', 'requires_action', 'requires_capture', 'processing']
for (const from of cancelable) {
  t.test(`cancel from ${from} → 200 canceled with the reason and time`, async (t) => {
    const p = await buildPaymentsApp(t)
    const intent = await createIntent(p)
    if (from !== 'requires_payment_method') await force(p, intent.id as string, from)
    const res = await cancel(p, intent.id as string, { cancellation_reason: 'requested_by_customer' })
    t.equal(res.statusCode, 200)
    const body = res.json()
    t.ok(Math.abs(Date.parse(body.data.canceled_at) - Date.now()) < 60_000, 'canceled_at is now')
    t.same(body, { success: true, data: { ...intent, status: 'canceled', canceled_at: body.data.canceled_at, cancellation_reason: 'requested_by_customer' } })
    const events = await p.store.payments.events(intent.id as string)
    t.same(events.at(-1)?.toStatus, 'canceled')
    t.same(events.at(-1)?.fromStatus, from)
  })
}

t.test('cancel without a body → 200 with a null reason', async (t) => {
  const p = await buildPaymentsApp(t)
  const intent = await createIntent(p)
  const res = await cancel(p, intent.id as string)
  t.equal(res.statusCode, 200)
  t.same([res.json().data.status, res.json().data.cancellation_reason], ['canceled', null])
})

for (const final of ['canceled', 'succeeded'] as const) {
  t.test(`cancel when ${final} → 409 payment_intent_not_cancelable with the status`, async (t) => {
    const p = await buildPaymentsApp(t)
    const intent = await createIntent(p)
    await force(p, intent.id as string, final)
    const res = await cancel(p, intent.id as string)
    t.equal(res.statusCode, 409)
    t.same(res.json(), { success: false, message: `The payment intent cannot be canceled because its status is ${final}.`, status: final })
  })
}

t.test('cancel of another organization\'s intent → 404, and the intent is unchanged', async (t) => {
  const p = await buildPaymentsApp(t)
  const intent = await createIntent(p)
  const res = await cancel(p, intent.id as string, undefined, 'org_other')
  t.equal(res.statusCode, 404)
  t.same(res.json(), { success: false, message: 'Payment intent not found.' })
  t.equal((await p.store.payments.get(intent.id as string, new Set(['org_hq'])))?.status, 'requires_payment_method')
})

t.test('cancel of an unknown or malformed id → 404', async (t) => {
  const p = await buildPaymentsApp(t)
  for (const id of ['pi_01ARZ3NDEKTSV4RRFFQ69G5FAV', 'nope']) {
    const res = await cancel(p, id)
    t.equal(res.statusCode, 404)
    t.same(res.json(), { success: false, message: 'Payment intent not found.' })
  }
})

t.test('cancel with an unknown reason or an unknown field → 422', async (t) => {
  const p = await buildPaymentsApp(t)
  const intent = await createIntent(p)
  const res = await cancel(p, intent.id as string, { cancellation_reason: 'bored', force: true })
  t.equal(res.statusCode, 422)
  t.same(res.json(), {
    success: false,
    message: 'The request body is invalid.',
    errors: { force: ['is not allowed'], cancellation_reason: ['must be one of: duplicate, fraudulent, requested_by_customer, abandoned'] },
  })
})

t.test('20 concurrent cancels → exactly one 200 and 19 × 409 seeing canceled', async (t) => {
  const p = await buildPaymentsApp(t)
  const intent = await createIntent(p)
  await p.app.listen({ port: 0, host: '127.0.0.1' })
  const address = p.app.server.address() as { port: number }
  const results = await Promise.all(Array.from({ length: 20 }, async () => {
    const res = await fetch(`http://127.0.0.1:${address.port}${BASE}/payment-intents/${intent.id as string}/cancel`, {
      method: 'POST', headers: { ...caller('org_hq'), 'content-type': 'application/json' }, body: '{"cancellation_reason":"duplicate"}',
    })
    return { status: res.status, body: await res.json() as Record<string, unknown> }
  }))
  t.equal(results.filter((r) => r.status === 200).length, 1)
  t.same(results.filter((r) => r.status !== 200), Array.from({ length: 19 }, () => ({
    status: 409, body: { success: false, message: 'The payment intent cannot be canceled because its status is canceled.', status: 'canceled' },
  })))
  t.equal((await p.store.payments.events(intent.id as string)).length, 2, 'one creation and one cancel event')
})
