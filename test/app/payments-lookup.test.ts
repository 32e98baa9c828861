import t from 'tap'
import { buildPaymentsApp, caller } from '../helpers/payments-config.js'

const BASE = '/api/v1/ecommerce'

t.test('GET config/processor → processor, publishable key and mode', async (t) => {
  const { app } = await buildPaymentsApp(t)
  const res = await app.inject({ method: 'GET', url: `${BASE}/config/processor`, headers: caller('org_hq') })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { success: true, data: { processor: 'stripe', publishable_key: 'pk_test_123', mode: 'test' } })
})

t.test('GET config/processor?connected_account_id= adds the account\'s processor account id', async (t) => {
  const { app } = await buildPaymentsApp(t)
  const res = await app.inject({ method: 'GET', url: `${BASE}/config/processor?connected_account_id=acct_store_1`, headers: caller('org_hq') })
  t.equal(res.statusCode, 200)
  t.same(res.json(), {
    success: true,
    data: { processor: 'stripe', publishable_key: 'pk_test_123', mode: 'test', connected_account_id: 'acct_store_1', processor_account_id: 'acct_1Store1' },
  })
})

t.test('GET config/processor: unknown account and another tree\'s → the same 404 (E1), repeated → 422', async (t) => {
  const { app } = await buildPaymentsApp(t)
  const unknown = await app.inject({ method: 'GET', url: `${BASE}/config/processor?connected_account_id=acct_nope`, headers: caller('org_hq') })
  t.equal(unknown.statusCode, 404)
  t.same(unknown.json(), { success: false, message: 'Connected account not found.' })
  const foreign = await app.inject({ method: 'GET', url: `${BASE}/config/processor?connected_account_id=acct_other`, headers: caller('org_hq') })
  t.equal(foreign.statusCode, 404)
  t.same(foreign.json(), unknown.json(), 'a foreign account id is answered exactly like an unknown one')
  t.equal(foreign.headers['content-type'], unknown.headers['content-type'])
  const twice = await app.inject({ method: 'GET', url: `${BASE}/config/processor?connected_account_id=acct_hq&connected_account_id=acct_hq`, headers: caller('org_hq') })
  t.equal(twice.statusCode, 422)
  t.same(twice.json(), { success: false, message: 'The query parameters are invalid.', errors: { connected_account_id: ['must be given once'] } })
})

t.test('GET config/processor follows a config reload (settings read per request)', async (t) => {
  const { app, setConfig } = await buildPaymentsApp(t)
  const { serviceTestConfig, paymentsServiceConfig } = await import('../helpers/payments-config.js')
  await setConfig(serviceTestConfig('payments', paymentsServiceConfig({ processor: { name: 'stripe', publishable_key: 'pk_live_9', mode: 'live' } })))
  const res = await app.inject({ method: 'GET', url: `${BASE}/config/processor`, headers: caller('org_hq') })
  t.same(res.json(), { success: true, data: { processor: 'stripe', publishable_key: 'pk_live_9', mode: 'live' } })
})

t.test('GET connected-account → the organization\'s account', async (t) => {
  const { app } = await buildPaymentsApp(t)
  const cases: [string, string, string, string][] = [
    ['org_hq', 'org_hq', 'acct_hq', 'acct_1Hq'],
    ['org_hq', 'org_store_1', 'acct_store_1', 'acct_1Store1'],
    ['org_hq', 'org_child', 'acct_child', 'acct_1Child'],
    ['org_store_9', 'org_store_9', 'acct_store_9', 'acct_1Store9'],
  ]
  for (const [callerOrg, org, account, processor] of cases) {
    const res = await app.inject({ method: 'GET', url: `${BASE}/connected-account?organization_id=${org}`, headers: caller(callerOrg) })
    t.equal(res.statusCode, 200, org)
    t.same(res.json(), { success: true, data: { connected_account_id: account, organization_id: org, processor_account_id: processor } })
  }
})

t.test('GET connected-account without organization_id → 422', async (t) => {
  const { app } = await buildPaymentsApp(t)
  const res = await app.inject({ method: 'GET', url: `${BASE}/connected-account`, headers: caller('org_hq') })
  t.equal(res.statusCode, 422)
  t.same(res.json(), { success: false, message: 'The query parameters are invalid.', errors: { organization_id: ['is required'] } })
})

t.test('GET connected-account for an organization without one → 404', async (t) => {
  const { app } = await buildPaymentsApp(t)
  const res = await app.inject({ method: 'GET', url: `${BASE}/connected-account?organization_id=org_noacct`, headers: caller('org_noacct') })
  t.equal(res.statusCode, 404)
  t.same(res.json(), { success: false, message: 'Organization org_noacct has no connected account.' })
})

t.test('GET connected-account outside the tree → 403, existing or not', async (t) => {
  const { app } = await buildPaymentsApp(t)
  for (const org of ['org_other', 'org_store_9', 'org_missing']) {
    const res = await app.inject({ method: 'GET', url: `${BASE}/connected-account?organization_id=${org}`, headers: caller('org_hq') })
    t.equal(res.statusCode, 403, org)
    t.same(res.json(), { success: false, message: 'This organization is outside your organization\'s access.' })
  }
})
