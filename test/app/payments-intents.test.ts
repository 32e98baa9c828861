import t, { type Test } from 'tap'
import { buildPaymentsApp, caller } from '../helpers/payments-config.js'

const BASE = '/api/v1/ecommerce'
const ID = /^pi_[0-9A-HJKMNP-TV-Z]{26}$/

function create (app: Awaited<ReturnType<typeof buildPaymentsApp>>['app'], org: string, payload: unknown, headers: Record<string, string> = {}) {
  return app.inject({ method: 'POST', url: `${BASE}/payment-intents`, headers: caller(org, headers), payload: payload as Record<string, unknown> })
}

/** Checks the generated fields' formats, then returns the body with them replaced by placeholders. */
function stable (t: Test, body: { data: Record<string, unknown> }) {
  const data = body.data
  t.match(data.id, ID)
  t.equal(data.client_secret, `${data.id as string}_secret_${(data.client_secret as string).split('_secret_')[1]}`)
  t.match(data.client_secret, /_secret_[A-Za-z0-9_-]{24}$/)
  t.ok(Math.abs(Date.parse(data.created_at as string) - Date.now()) < 60_000, 'created_at is now')
  return { ...body, data: { ...data, id: 'ID', client_secret: 'SECRET', created_at: 'NOW' } }
}

t.test('201: organization_id resolves the organization\'s connected account', async (t) => {
  const { app } = await buildPaymentsApp(t)
  const res = await create(app, 'org_hq', { organization_id: 'org_hq', amount: 1999, currency: 'usd', description: 'Order 42', metadata: { order: '42' } })
  t.equal(res.statusCode, 201)
  t.same(stable(t, res.json()), {
    success: true,
    data: {
      id: 'ID',
      amount: 1999,
      currency: 'usd',
      status: 'requires_payment_method',
      capture_method: 'automatic',
      description: 'Order 42',
      metadata: { order: '42' },
      organization_id: 'org_hq',
      connected_account_id: 'acct_hq',
      destination: 'acct_1Hq',
      client_secret: 'SECRET',
      created_at: 'NOW',
      canceled_at: null,
      cancellation_reason: null,
    },
  })
})

t.test('201: connected_account_id of a store; currency upper case is stored lower case; manual capture', async (t) => {
  const { app } = await buildPaymentsApp(t)
  const res = await create(app, 'org_hq', { connected_account_id: 'acct_store_1', amount: 500, currency: 'EUR', capture_method: 'manual' })
  t.equal(res.statusCode, 201)
  t.same(stable(t, res.json()), {
    success: true,
    data: {
      id: 'ID', amount: 500, currency: 'eur', status: 'requires_payment_method', capture_method: 'manual', description: null,
      metadata: {}, organization_id: 'org_store_1', connected_account_id: 'acct_store_1', destination: 'acct_1Store1',
      client_secret: 'SECRET', created_at: 'NOW', canceled_at: null, cancellation_reason: null,
    },
  })
})

t.test('201: a store organization_id and a child organization are reachable from the parent', async (t) => {
  const { app } = await buildPaymentsApp(t)
  const store = await create(app, 'org_hq', { organization_id: 'org_store_1', amount: 1, currency: 'usd' })
  t.equal(store.statusCode, 201)
  t.same([store.json().data.connected_account_id, store.json().data.destination], ['acct_store_1', 'acct_1Store1'])
  const child = await create(app, 'org_hq', { organization_id: 'org_child', amount: 1, currency: 'usd' })
  t.equal(child.statusCode, 201)
  t.same([child.json().data.connected_account_id, child.json().data.destination], ['acct_child', 'acct_1Child'])
})

t.test('422 when both organization_id and connected_account_id are given', async (t) => {
  const { app } = await buildPaymentsApp(t)
  const res = await create(app, 'org_hq', { organization_id: 'org_hq', connected_account_id: 'acct_hq', amount: 1, currency: 'usd' })
  t.equal(res.statusCode, 422)
  t.same(res.json(), {
    success: false,
    message: 'Provide exactly one of organization_id or connected_account_id.',
    errors: {
      organization_id: ['must not be combined with connected_account_id'],
      connected_account_id: ['must not be combined with organization_id'],
    },
  })
})

t.test('422 when neither organization_id nor connected_account_id is given', async (t) => {
  const { app } = await buildPaymentsApp(t)
  const res = await create(app, 'org_hq', { amount: 1, currency: 'usd' })
  t.equal(res.statusCode, 422)
  t.same(res.json(), {
    success: false,
    message: 'Provide exactly one of organization_id or connected_account_id.',
    errors: {
      organization_id: ['is required when connected_account_id is absent'],
      connected_account_id: ['is required when organization_id is absent'],
    },
  })
})

t.test('422 lists every invalid field: types, bounds, unknown fields, currency list, metadata bounds', async (t) => {
  const { app } = await buildPaymentsApp(t, { settings: { currencies: ['usd', 'EUR'], max_amount: 1000 } })
  const res = await create(app, 'org_hq', {
    organization_id: 'org_hq',
    amount: 1001,
    currency: 'gbp',
    description: 'x'.repeat(1001),
    capture_method: 'later',
    metadata: { ['k'.repeat(41)]: 'v', long: 'x'.repeat(501), num: 5 },
    customer: 'cus_1',
  })
  t.equal(res.statusCode, 422)
  t.same(res.json(), {
    success: false,
    message: 'The request body is invalid.',
    errors: {
      customer: ['is not allowed'],
      description: ['must NOT have more than 1000 characters'],
      capture_method: ['must be one of: automatic, manual'],
      amount: ['must be <= 1000'],
      currency: ['must be one of: usd, eur'],
      metadata: ['keys must be 1 to 40 characters'],
      'metadata.long': ['must NOT have more than 500 characters'],
      'metadata.num': ['must be string'],
    },
  })
})

t.test('422 for a non-integer or non-positive amount and a missing currency', async (t) => {
  const { app } = await buildPaymentsApp(t)
  const fractional = await create(app, 'org_hq', { organization_id: 'org_hq', amount: 1.5, currency: 'usd' })
  t.same(fractional.json(), { success: false, message: 'The request body is invalid.', errors: { amount: ['must be integer'] } })
  const zero = await create(app, 'org_hq', { organization_id: 'org_hq', amount: 0 })
  t.equal(zero.statusCode, 422)
  t.same(zero.json(), { success: false, message: 'The request body is invalid.', errors: { currency: ['is required'], amount: ['must be >= 1'] } })
})

t.test('422 for more metadata keys than allowed', async (t) => {
  const { app } = await buildPaymentsApp(t)
  const metadata = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v']))
  const res = await create(app, 'org_hq', { organization_id: 'org_hq', amount: 1, currency: 'usd', metadata })
  t.equal(res.statusCode, 422)
  t.same(res.json(), { success: false, message: 'The request body is invalid.', errors: { metadata: ['must have at most 20 keys'] } })
})

t.test('422 when the body is not a JSON object; 400 when it is not JSON', async (t) => {
  const { app } = await buildPaymentsApp(t)
  const array = await create(app, 'org_hq', [1, 2])
  t.equal(array.statusCode, 422)
  t.same(array.json(), { success: false, message: 'The request body is invalid.', errors: { body: ['must be a JSON object'] } })
  const broken = await app.inject({ method: 'POST', url: `${BASE}/payment-intents`, headers: { ...caller('org_hq'), 'content-type': 'application/json' }, payload: '{"amount":' })
  t.equal(broken.statusCode, 400)
  t.same(broken.json(), { success: false, message: 'The request body is not valid JSON.' })
})

t.test('403 for an organization outside the caller\'s tree, with the same body whether it exists or not', async (t) => {
  const { app } = await buildPaymentsApp(t)
  const expected = { success: false, message: 'This organization is outside your organization\'s access.' }
  for (const org of ['org_other', 'org_store_9', 'org_does_not_exist']) {
    const res = await create(app, 'org_hq', { organization_id: org, amount: 1, currency: 'usd' })
    t.equal(res.statusCode, 403, org)
    t.same(res.json(), expected, org)
  }
  const upward = await create(app, 'org_child', { organization_id: 'org_hq', amount: 1, currency: 'usd' })
  t.equal(upward.statusCode, 403, 'a child cannot reach its parent')
})

t.test('404 connected_account_not_found for a reachable organization without a connected account', async (t) => {
  const { app } = await buildPaymentsApp(t)
  const res = await create(app, 'org_hq', { organization_id: 'org_store_2', amount: 1, currency: 'usd' })
  t.equal(res.statusCode, 404)
  t.same(res.json(), { success: false, message: 'Organization org_store_2 has no connected account.' })
})

t.test('connected_account_id: unknown and another tree\'s → the same 404 (E1: existence not revealed)', async (t) => {
  const { app } = await buildPaymentsApp(t)
  const unknown = await create(app, 'org_hq', { connected_account_id: 'acct_nope', amount: 1, currency: 'usd' })
  t.equal(unknown.statusCode, 404)
  t.same(unknown.json(), { success: false, message: 'Connected account not found.' })
  const foreign = await create(app, 'org_hq', { connected_account_id: 'acct_store_9', amount: 1, currency: 'usd' })
  t.equal(foreign.statusCode, 404)
  t.same(foreign.json(), unknown.json(), 'a foreign account id is answered exactly like an unknown one')
})

t.test('GET returns the intent to its organization and to a parent organization', async (t) => {
  const { app } = await buildPaymentsApp(t)
  const created = (await create(app, 'org_child', { organization_id: 'org_child', amount: 700, currency: 'usd' })).json()
  for (const org of ['org_child', 'org_hq']) {
    const res = await app.inject({ method: 'GET', url: `${BASE}/payment-intents/${created.data.id as string}`, headers: caller(org) })
    t.equal(res.statusCode, 200, org)
    t.same(res.json(), created, org)
  }
})

t.test('GET: another organization\'s intent, an unknown id and a malformed id all answer the same 404', async (t) => {
  const { app } = await buildPaymentsApp(t)
  const created = (await create(app, 'org_hq', { organization_id: 'org_hq', amount: 700, currency: 'usd' })).json()
  const expected = { success: false, message: 'Payment intent not found.' }
  for (const [org, id] of [['org_other', created.data.id], ['org_child', created.data.id], ['org_hq', 'pi_01ARZ3NDEKTSV4RRFFQ69G5FAV'], ['org_hq', '..%2F..']]) {
    const res = await app.inject({ method: 'GET', url: `${BASE}/payment-intents/${id as string}`, headers: caller(org as string) })
    t.equal(res.statusCode, 404, `${org as string} ${id as string}`)
    t.same(res.json(), expected)
  }
})

t.test('the intent is stored under the caller\'s organization, not the destination\'s', async (t) => {
  const { app, store } = await buildPaymentsApp(t)
  const created = (await create(app, 'org_hq', { organization_id: 'org_store_1', amount: 5, currency: 'usd' })).json()
  const stored = await store.payments.get(created.data.id, new Set(['org_hq']))
  t.same([stored?.ownerOrgId, stored?.clientId, stored?.organizationId], ['org_hq', 'svc-org_hq', 'org_store_1'])
})
