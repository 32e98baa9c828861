import t from 'tap'
import { gatewaySettings } from '../../src/config/gateway-settings.js'
import auth from '../../plugins/auth/index.js'
import tokenType from '../../plugins/token-type/index.js'
import { buildPolicyApp, tokenEnv } from '../helpers/token-app.js'
import { mint, serviceClaims, userClaims } from '../helpers/token-mint.js'
import type { EnvelopeName } from '../../src/plugin/envelope-name.js'

const env = await tokenEnv()
const serviceToken = await mint(env.serviceKey, serviceClaims())
const userToken = await mint(env.userKey, userClaims())
const challenge = 'Bearer realm="lanegate", error="invalid_token", error_description="wrong token type"'

function appFor (envelope: EnvelopeName = 'exchange') {
  const { app } = buildPolicyApp({
    env,
    envelope,
    routes: [
      { url: '/service', chain: [[auth, {}], [tokenType, { allow: ['service'] }]] },
      { url: '/user', chain: [[auth, {}], [tokenType, { allow: ['user'] }]] },
      { url: '/both', chain: [[auth, {}], [tokenType, { allow: ['service', 'user'] }]] },
    ],
  })
  t.teardown(() => app.close())
  return app
}

const app = appFor()
const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

t.test('B12: a user token on a service-only route is 401 invalid_token_type', async (tt) => {
  const res = await app.inject({ url: '/service', headers: bearer(userToken) })
  tt.equal(res.statusCode, 401)
  tt.same(res.json(), { error: 'invalid_token_type', message: 'This endpoint does not accept this type of token.' })
  tt.equal(res.headers['www-authenticate'], challenge)
})

t.test('B12: a service token on a user-only route is 401 invalid_token_type', async (tt) => {
  const res = await app.inject({ url: '/user', headers: bearer(serviceToken) })
  tt.equal(res.statusCode, 401)
  tt.same(res.json(), { error: 'invalid_token_type', message: 'This endpoint does not accept this type of token.' })
  tt.equal(res.headers['www-authenticate'], challenge)
})

t.test('the accepted types pass', async (tt) => {
  tt.equal((await app.inject({ url: '/service', headers: bearer(serviceToken) })).statusCode, 200)
  tt.equal((await app.inject({ url: '/user', headers: bearer(userToken) })).statusCode, 200)
  tt.equal((await app.inject({ url: '/both', headers: bearer(serviceToken) })).statusCode, 200)
  tt.equal((await app.inject({ url: '/both', headers: bearer(userToken) })).statusCode, 200)
})

t.test('the wrong-type body in each envelope', async (tt) => {
  const expected: Record<string, unknown> = {
    payments: { success: false, message: 'This endpoint does not accept this type of token.' },
    plain: { error: 'invalid_token_type', message: 'This endpoint does not accept this type of token.' },
    exchange: { error: 'invalid_token_type', message: 'This endpoint does not accept this type of token.' },
  }
  for (const envelope of ['payments', 'plain', 'exchange'] as const) {
    const res = await appFor(envelope).inject({ url: '/service', headers: bearer(userToken) })
    tt.equal(res.statusCode, 401, envelope)
    tt.same(res.json(), expected[envelope], envelope)
  }
})

t.test('no token on a typed route is the ordinary 401', async (tt) => {
  const res = await app.inject({ url: '/service' })
  tt.equal(res.statusCode, 401)
  tt.same(res.json(), { error: 'Unauthenticated.' })
  tt.equal(res.headers['www-authenticate'], 'Bearer realm="lanegate"')
})

t.test('token-type requires auth before it, and a chain without auth fails closed', async (tt) => {
  tt.same(tokenType.requires?.({ allow: ['service'] }, gatewaySettings(env.config)), ['auth'])
  const { app: broken } = buildPolicyApp({ env, routes: [{ url: '/t', chain: [[tokenType, { allow: ['service'] }]] }] })
  tt.teardown(() => broken.close())
  const res = await broken.inject({ url: '/t', headers: bearer(serviceToken) })
  tt.equal(res.statusCode, 500)
  tt.same(res.json(), { error: 'Internal server error.' })
})
