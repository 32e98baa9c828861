import t, { type Test } from 'tap'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Writable } from 'node:stream'
import pino from 'pino'
import type { FastifyBaseLogger } from 'fastify'
import auth from '../../plugins/auth/index.js'
import { createTokenVerifier } from '../../src/auth/token-verifier.js'
import type { UserTokenIssuerConfig } from '../../src/config/types.js'
import { buildPolicyApp, tokenEnv } from '../helpers/token-app.js'
import { waitFor } from '../helpers/wait-for.js'
import { introspector as gatewayClient, jwtResource, opaqueResource, startTestProvider, type TestProvider } from '../helpers/oidc-provider.js'

/**
 * Opaque access tokens of a real OpenID provider (node-oidc-provider) checked by its introspection endpoint
 * (RFC 7662), cached by the token's digest, and a failing endpoint answered with 503 auth_unavailable.
 */
const invalid = (description: string) => `Bearer realm="lanegate", error="invalid_token", error_description="${description}"`
const unavailable = { error: 'auth_unavailable', message: 'The token could not be checked: its identity provider did not answer; retry shortly.' }

function introspectingIssuer (provider: TestProvider, edit: Partial<UserTokenIssuerConfig> = {}, url = provider.introspectionUrl): UserTokenIssuerConfig {
  return {
    issuer: provider.issuer,
    audience: opaqueResource,
    algorithms: ['RS256'],
    max_token_lifetime_seconds: 3600,
    claims: { scopes: { claim: 'scope' }, organization: { claim: 'tenant' }, token_type: 'service' },
    introspection: { url, client_id: gatewayClient.id, client_secret: gatewayClient.secret, cache_seconds: 60, timeout_ms: 3000 },
    ...edit,
  }
}

async function setUp (tt: Test, issuer: (provider: TestProvider) => UserTokenIssuerConfig) {
  const provider = await startTestProvider()
  tt.teardown(() => provider.close())
  const env = await tokenEnv({ extraIssuers: [issuer(provider)] })
  const { app } = buildPolicyApp({ env, routes: [{ url: '/t', chain: [[auth, {}]] }] })
  tt.teardown(() => app.close())
  const call = async (token: string) => await app.inject({ url: '/t', headers: { authorization: `Bearer ${token}` } })
  return { provider, call }
}

t.test('an active opaque token becomes the caller its claims block maps, and is introspected once', async (tt) => {
  const { provider, call } = await setUp(tt, (p) => introspectingIssuer(p))
  const token = await provider.token(opaqueResource, 'orders.read orders.write')
  const res = await call(token)
  tt.equal(res.statusCode, 200)
  const body = res.json()
  tt.same(body, {
    ok: true,
    principal: {
      // node-oidc-provider's client-credentials answer has no sub and no jti: the subject is the client.
      tokenType: 'service', subject: 'shop-app', clientId: 'shop-app', organizationId: 'org_parent',
      scopes: ['orders.read', 'orders.write'], tokenId: '', expiresAt: body.principal.expiresAt, issuer: provider.issuer,
    },
  })
  tt.ok(body.principal.expiresAt > Date.now() / 1000 && body.principal.expiresAt <= Date.now() / 1000 + 600, 'expiresAt is the answer\'s exp')
  tt.equal(provider.hits('/token/introspection'), 1)
  tt.same((await call(token)).json(), body, 'the same caller from the cache')
  tt.equal(provider.hits('/token/introspection'), 1, 'the second request is answered from the cache')
})

t.test('an opaque token the endpoint calls inactive is refused, and not cached', async (tt) => {
  const { provider, call } = await setUp(tt, (p) => introspectingIssuer(p))
  for (const expected of [1, 2]) {
    const res = await call('UnknownOpaqueTokenValue-0123456789abcdef')
    tt.equal(res.statusCode, 401)
    tt.same(res.json(), { error: 'Unauthenticated.' })
    tt.equal(res.headers['www-authenticate'], invalid('The access token is not active'))
    tt.equal(provider.hits('/token/introspection'), expected)
  }
})

t.test('an active token for another audience is refused', async (tt) => {
  const { provider, call } = await setUp(tt, (p) => introspectingIssuer(p, { audience: 'https://another-api.shop.test' }))
  const res = await call(await provider.token(opaqueResource))
  tt.equal(res.statusCode, 401)
  tt.equal(res.headers['www-authenticate'], invalid('The access token is invalid'))
})

t.test('cache_seconds 0 introspects every request', async (tt) => {
  const { provider, call } = await setUp(tt, (p) => introspectingIssuer(p, { introspection: { url: p.introspectionUrl, client_id: gatewayClient.id, client_secret: gatewayClient.secret, cache_seconds: 0, timeout_ms: 3000 } }))
  const token = await provider.token(opaqueResource)
  tt.equal((await call(token)).statusCode, 200)
  tt.equal((await call(token)).statusCode, 200)
  tt.equal(provider.hits('/token/introspection'), 2)
})

t.test('with discovery and introspection, JWTs are verified by signature and opaque tokens introspected', async (tt) => {
  const { provider, call } = await setUp(tt, (p) => introspectingIssuer(p, { discovery_url: p.discoveryUrl, audience: jwtResource }))
  tt.equal((await call(await provider.token(jwtResource))).statusCode, 200)
  tt.equal(provider.hits('/token/introspection'), 0)
  tt.equal(provider.hits('/jwks'), 1)
})

t.test('wrong introspection credentials: the endpoint refuses the gateway, so the caller gets 503, not 401', async (tt) => {
  const { provider, call } = await setUp(tt, (p) => introspectingIssuer(p, { introspection: { url: p.introspectionUrl, client_id: gatewayClient.id, client_secret: 'wrong', cache_seconds: 60, timeout_ms: 3000 } }))
  const res = await call(await provider.token(opaqueResource))
  tt.equal(res.statusCode, 503)
  tt.same(res.json(), unavailable)
})

t.test('an endpoint that is down, errs or never answers gives 503 auth_unavailable and a warning without the token', async (tt) => {
  const provider = await startTestProvider()
  tt.teardown(() => provider.close())
  const token = await provider.token(opaqueResource)
  let mode: 'error' | 'garbage' | 'hang' = 'error'
  const broken = createServer((_req, res) => {
    if (mode === 'error') { res.statusCode = 500; res.end('oops'); return }
    if (mode === 'garbage') { res.setHeader('content-type', 'application/json'); res.end('{"ok":true}'); return }
    // hang: never answers; the gateway's timeout ends it.
  })
  await new Promise<void>((resolve) => broken.listen(0, '127.0.0.1', resolve))
  tt.teardown(() => { broken.closeAllConnections(); broken.close() })
  const url = `http://127.0.0.1:${(broken.address() as AddressInfo).port}/introspect`
  const lines: string[] = []
  const logger = pino({ level: 'info' }, new Writable({ write (chunk, _enc, done) { lines.push(String(chunk)); done() } })) as unknown as FastifyBaseLogger
  const env = await tokenEnv({ extraIssuers: [introspectingIssuer(provider, { introspection: { url, client_id: 'gw', client_secret: 's3cret-value', cache_seconds: 60, timeout_ms: 300 } })] })
  const verifier = createTokenVerifier({ keys: env.shared.keys, logger })
  for (const m of ['error', 'garbage', 'hang'] as const) {
    mode = m
    await tt.rejects(verifier.verify(token, env.config, env.snapshot.indexes), { code: 'auth_unavailable', status: 503 }, m)
  }
  tt.equal(lines.length, 1, 'one warning a minute per issuer')
  tt.match(JSON.parse(lines[0] as string), { level: 40, issuer: provider.issuer, url, reason: 'the introspection endpoint answered 500', msg: /token introspection failed/ })
  tt.notOk(lines.join('\n').includes(token), 'the token is not logged')
  tt.notOk(lines.join('\n').includes('s3cret-value'), 'nor the client secret')

  // Through the policy: the 503 in the route's envelope.
  const { app } = buildPolicyApp({ env, routes: [{ url: '/t', chain: [[auth, {}]] }] })
  tt.teardown(() => app.close())
  mode = 'error'
  const res = await app.inject({ url: '/t', headers: { authorization: `Bearer ${token}` } })
  tt.equal(res.statusCode, 503)
  tt.same(res.json(), unavailable)
  const payments = buildPolicyApp({ env, envelope: 'payments', routes: [{ url: '/p', chain: [[auth, {}]] }] })
  tt.teardown(() => payments.app.close())
  const paid = await payments.app.inject({ url: '/p', headers: { authorization: `Bearer ${token}` } })
  tt.same(paid.json(), { success: false, message: unavailable.message })
})

t.test('a cached answer is never used past the token\'s exp', async (tt) => {
  let exp = 0
  let hits = 0
  const endpoint = createServer((_req, res) => {
    hits += 1
    res.setHeader('content-type', 'application/json')
    res.end(JSON.stringify({ active: true, client_id: 'shop-app', scope: 'orders.read', tenant: 'org_parent', exp }))
  })
  await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve))
  tt.teardown(() => { endpoint.closeAllConnections(); endpoint.close() })
  const url = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/introspect`
  const issuer: UserTokenIssuerConfig = {
    issuer: 'https://idp.test', audience: opaqueResource, algorithms: ['RS256'], max_token_lifetime_seconds: 3600,
    claims: { scopes: { claim: 'scope' }, organization: { claim: 'tenant' }, token_type: 'service' },
    introspection: { url, client_id: 'gw', client_secret: 's', cache_seconds: 600, timeout_ms: 3000 },
  }
  const env = await tokenEnv({ extraIssuers: [issuer], edit: (config) => { config.issuer.clock_tolerance_seconds = 0 } })
  const { app } = buildPolicyApp({ env, routes: [{ url: '/t', chain: [[auth, {}]] }] })
  tt.teardown(() => app.close())
  exp = Math.floor(Date.now() / 1000) + 2
  const call = async () => await app.inject({ url: '/t', headers: { authorization: 'Bearer ShortLivedOpaqueToken-0123456789' } })
  tt.equal((await call()).statusCode, 200)
  await waitFor(() => Date.now() >= exp * 1000, { what: 'the token\'s exp' })
  const late = await call()
  tt.equal(late.statusCode, 401)
  tt.equal(late.headers['www-authenticate'], invalid('The access token expired'))
  tt.equal(hits, 1, 'refused from the cache entry\'s own exp, although cache_seconds had not run out')
})
