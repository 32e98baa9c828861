import t from 'tap'
import { gatewaySettings } from '../../src/config/gateway-settings.js'
import auth from '../../plugins/auth/index.js'
import organization from '../../plugins/organization/index.js'
import { buildPolicyApp, tokenEnv } from '../helpers/token-app.js'
import { mint, serviceClaims } from '../helpers/token-mint.js'
import type { EnvelopeName } from '../../src/plugin/envelope-name.js'

const env = await tokenEnv()
const parent = await mint(env.serviceKey, serviceClaims('svc_pay', 'org_parent'))
const child = await mint(env.serviceKey, serviceClaims('svc_child', 'org_child', 'commerce:payment-intents.read'))
const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

function appFor (envelope: EnvelopeName) {
  const { app } = buildPolicyApp({
    env,
    envelope,
    routes: [
      { url: '/orgs/:org_id', chain: [[auth, {}], [organization, { param: 'org_id' }]] },
      { url: '/lookup', chain: [[auth, {}], [organization, { query: 'organization_id' }]] },
      { url: '/stores/:store_org_id/x', chain: [[auth, {}], [organization, { param: 'store_org_id', not_found: true }]] },
      { url: '/misconfigured', chain: [[auth, {}], [organization, { param: 'store_org_id' }]] },
    ],
  })
  t.teardown(() => app.close())
  return app
}
const payments = appFor('payments')
const exchange = appFor('exchange')

t.test('the caller reaches its own organization, its stores and its descendants', async (tt) => {
  for (const id of ['org_parent', 'org_store_a', 'org_child', 'org_store_child', 'org_store_inactive']) {
    tt.equal((await payments.inject({ url: `/orgs/${id}`, headers: bearer(parent) })).statusCode, 200, id)
  }
})

t.test('a child organization does not reach its parent or siblings', async (tt) => {
  for (const id of ['org_parent', 'org_store_a', 'org_other']) {
    tt.equal((await payments.inject({ url: `/orgs/${id}`, headers: bearer(child) })).statusCode, 403, id)
  }
  tt.equal((await payments.inject({ url: '/orgs/org_store_child', headers: bearer(child) })).statusCode, 200)
})

t.test('E1: another tree\'s organization and a nonexistent one get the identical 403', async (tt) => {
  const other = await payments.inject({ url: '/orgs/org_other', headers: bearer(parent) })
  const missing = await payments.inject({ url: '/orgs/org_does_not_exist', headers: bearer(parent) })
  tt.equal(other.statusCode, 403)
  tt.same(other.json(), { success: false, message: 'This organization is outside your access.' })
  tt.equal(missing.statusCode, 403)
  tt.equal(missing.body, other.body)
})

t.test('the 403 body in the plain and exchange envelopes', async (tt) => {
  tt.same((await appFor('plain').inject({ url: '/orgs/org_other', headers: bearer(parent) })).json(), { error: 'Forbidden.' })
  tt.same((await exchange.inject({ url: '/orgs/org_other', headers: bearer(parent) })).json(), { error: 'Forbidden.' })
})

t.test('query parameter: checked when present, absent passes', async (tt) => {
  tt.equal((await payments.inject({ url: '/lookup?organization_id=org_child', headers: bearer(parent) })).statusCode, 200)
  tt.equal((await payments.inject({ url: '/lookup?organization_id=org_other', headers: bearer(parent) })).statusCode, 403)
  tt.equal((await payments.inject({ url: '/lookup', headers: bearer(parent) })).statusCode, 200)
})

t.test('query parameter given twice is a 400', async (tt) => {
  const res = await payments.inject({ url: '/lookup?organization_id=org_child&organization_id=org_other', headers: bearer(parent) })
  tt.equal(res.statusCode, 400)
  tt.same(res.json(), { success: false, message: 'Send the organization_id parameter once.' })
})

t.test('not_found: a reachable active store with a lane passes', async (tt) => {
  tt.equal((await exchange.inject({ url: '/stores/org_store_a/x', headers: bearer(parent) })).statusCode, 200)
  tt.equal((await exchange.inject({ url: '/stores/org_store_child/x', headers: bearer(parent) })).statusCode, 200)
})

t.test('E1: not_found answers the same 404 for out-of-tree, nonexistent, inactive, lane-less and non-store ids', async (tt) => {
  for (const id of ['org_store_other', 'org_nope', 'org_store_inactive', 'org_store_nolane', 'org_parent']) {
    const res = await exchange.inject({ url: `/stores/${id}/x`, headers: bearer(parent) })
    tt.equal(res.statusCode, 404, id)
    tt.same(res.json(), { error: 'store_not_found', store_org_id: id, message: 'Store not found or not accessible.' }, id)
  }
})

t.test('a route without the configured path parameter fails closed', async (tt) => {
  tt.equal((await payments.inject({ url: '/misconfigured', headers: bearer(parent) })).statusCode, 403)
})

t.test('organization requires auth', async (tt) => {
  tt.same(organization.requires?.({ param: 'x', not_found: false }, gatewaySettings(env.config)), ['auth'])
})
