import t from 'tap'
import { gatewaySettings } from '../../src/config/gateway-settings.js'
import auth from '../../plugins/auth/index.js'
import scope from '../../plugins/scope/index.js'
import { buildPolicyApp, tokenEnv } from '../helpers/token-app.js'
import { mint, serviceClaims } from '../helpers/token-mint.js'
import type { EnvelopeName } from '../../src/plugin/envelope-name.js'

const env = await tokenEnv()
const readOnly = await mint(env.serviceKey, serviceClaims('svc_pay', 'org_parent', 'commerce:payment-intents.read'))
const both = await mint(env.serviceKey, serviceClaims())
const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

function appFor (envelope: EnvelopeName = 'payments') {
  const { app } = buildPolicyApp({
    env,
    envelope,
    routes: [
      { url: '/create', chain: [[auth, {}], [scope, { all: ['commerce:payment-intents.create'] }]] },
      { url: '/checkout', chain: [[auth, {}], [scope, { all: ['commerce:payment-intents.read', 'commerce:payment-intents.create'] }]] },
      { url: '/any', chain: [[auth, {}], [scope, { any: ['commerce:connected-accounts.read', 'engage:content.view'] }]] },
      { url: '/read', chain: [[auth, {}], [scope, { any: ['commerce:payment-intents.read'] }]] },
    ],
  })
  t.teardown(() => app.close())
  return app
}
const app = appFor()

t.test('B11: a missing scope is 403 with the insufficient_scope challenge', async (tt) => {
  const res = await app.inject({ url: '/create', headers: bearer(readOnly) })
  tt.equal(res.statusCode, 403)
  tt.same(res.json(), { success: false, message: 'This action requires the commerce:payment-intents.create scope.' })
  tt.equal(res.headers['www-authenticate'], 'Bearer realm="lanegate", error="insufficient_scope", scope="commerce:payment-intents.create"')
})

t.test('B11: the challenge names every scope the route needs', async (tt) => {
  const res = await app.inject({ url: '/checkout', headers: bearer(readOnly) })
  tt.equal(res.statusCode, 403)
  tt.same(res.json(), { success: false, message: 'This action requires the commerce:payment-intents.create scope.' })
  tt.equal(res.headers['www-authenticate'], 'Bearer realm="lanegate", error="insufficient_scope", scope="commerce:payment-intents.read commerce:payment-intents.create"')
})

t.test('all: a token with every scope passes; any: one of them is enough', async (tt) => {
  tt.equal((await app.inject({ url: '/checkout', headers: bearer(both) })).statusCode, 200)
  tt.equal((await app.inject({ url: '/read', headers: bearer(readOnly) })).statusCode, 200)
  const content = await mint(env.userKey, { ...serviceClaims('app', 'org_parent', 'engage:content.view'), iss: 'https://users.test', aud: 'lanegate-users', sub: 'u', token_type: 'user' })
  tt.equal((await app.inject({ url: '/any', headers: bearer(content) })).statusCode, 200)
})

t.test('any: none of the scopes is a 403 naming the choices', async (tt) => {
  const res = await app.inject({ url: '/any', headers: bearer(both) })
  tt.equal(res.statusCode, 403)
  tt.same(res.json(), { success: false, message: 'This action requires one of the commerce:connected-accounts.read, engage:content.view scopes.' })
  tt.equal(res.headers['www-authenticate'], 'Bearer realm="lanegate", error="insufficient_scope", scope="commerce:connected-accounts.read engage:content.view"')
})

t.test('the 403 body in each envelope', async (tt) => {
  const expected: Record<string, unknown> = {
    payments: { success: false, message: 'This action requires the commerce:payment-intents.create scope.' },
    plain: { error: 'Forbidden.' },
    exchange: { error: 'Forbidden.' },
  }
  for (const envelope of ['payments', 'plain', 'exchange'] as const) {
    const res = await appFor(envelope).inject({ url: '/create', headers: bearer(readOnly) })
    tt.equal(res.statusCode, 403, envelope)
    tt.same(res.json(), expected[envelope], envelope)
  }
})

t.test('check() reports scope names missing from the config, with their paths', async (tt) => {
  tt.same(scope.check?.({ all: ['commerce:payment-intents.read', 'nope'], any: ['also:nope'] }, gatewaySettings(env.config)), [
    { path: 'all/1', message: 'unknown scope "nope": list it under scopes' },
    { path: 'any/0', message: 'unknown scope "also:nope": list it under scopes' },
  ])
  tt.same(scope.check?.({ all: ['engage:content.view'] }, gatewaySettings(env.config)), [])
  tt.same(scope.requires?.({ all: ['engage:content.view'] }, gatewaySettings(env.config)), ['auth'])
})
