import t, { type Test } from 'tap'
import auth from '../../plugins/auth/index.js'
import externalAuth from '../../plugins/external-auth/index.js'
import type { EnvelopeName } from '../../src/plugin/envelope-name.js'
import { buildPolicyApp, tokenEnv } from '../helpers/token-app.js'
import { mint, serviceClaims } from '../helpers/token-mint.js'
import { startBackend, type Backend } from '../helpers/upstream-servers.js'

/** `external-auth` in a bare app, asking a real decision server on port 0. */
async function setUp (tt: Test, options: Record<string, unknown>, envelope: EnvelopeName = 'plain') {
  const decisions = await startBackend(tt, 'decisions')
  const env = await tokenEnv()
  const { app } = buildPolicyApp({ env, envelope, routes: [{ url: '/t', chain: [[auth, {}], [externalAuth, { url: `${decisions.url}/decide`, timeout_ms: 5000, ...options }]] }] })
  tt.teardown(() => app.close())
  const token = await mint(env.serviceKey, serviceClaims())
  const call = async (headers: Record<string, string> = {}) => await app.inject({ url: '/t?x=1', headers: { authorization: `Bearer ${token}`, ...headers } })
  return { decisions, call, env }
}

function answer (decisions: Backend, status: number, headers: Record<string, string> = {}): void {
  decisions.handle((_req, res) => { res.writeHead(status, headers); res.end() })
}

t.test('a 2xx lets the request on; the service is asked with the method, path, route, named headers and caller', async (tt) => {
  const { decisions, call } = await setUp(tt, { headers: ['X-Store', 'x-missing'] })
  answer(decisions, 204)
  const res = await call({ 'x-store': 'org_store_a', 'x-other': 'not sent' })
  tt.equal(res.statusCode, 200)
  tt.match(res.json(), { ok: true, principal: { clientId: 'svc_pay' } })
  tt.equal(decisions.seen.length, 1)
  const seen = decisions.seen[0]
  tt.equal(seen?.method, 'POST')
  tt.equal(seen?.url, '/decide')
  tt.same(JSON.parse(seen?.body ?? ''), {
    method: 'GET',
    path: '/t',
    service: 'test',
    route: '/t',
    headers: { 'x-store': 'org_store_a' },
    principal: {
      token_type: 'service', subject: 'svc_pay', client_id: 'svc_pay', organization_id: 'org_parent',
      scopes: ['commerce:payment-intents.read', 'commerce:payment-intents.create'], issuer: 'https://gateway.test',
    },
  })
})

t.test('401 and 403 refuse in the route\'s envelope', async (tt) => {
  const plain = await setUp(tt, {})
  answer(plain.decisions, 401)
  const unauthenticated = await plain.call()
  tt.equal(unauthenticated.statusCode, 401)
  tt.same(unauthenticated.json(), { error: 'Unauthenticated.' })
  tt.equal(unauthenticated.headers['www-authenticate'], 'Bearer realm="lanegate"')
  answer(plain.decisions, 403)
  const forbidden = await plain.call()
  tt.equal(forbidden.statusCode, 403)
  tt.same(forbidden.json(), { error: 'Forbidden.' })

  const payments = await setUp(tt, {}, 'payments')
  answer(payments.decisions, 403)
  const paid = await payments.call()
  tt.equal(paid.statusCode, 403)
  tt.same(paid.json(), { success: false, message: 'Forbidden.' })
})

t.test('another status, a timeout or an unreachable service refuse with 503 auth_unavailable', async (tt) => {
  const unavailable = { error: 'auth_unavailable', message: 'The authorization service did not answer; retry shortly.' }
  const { decisions, call } = await setUp(tt, { timeout_ms: 200 })
  for (const status of [500, 302, 404]) {
    answer(decisions, status, status === 302 ? { location: '/elsewhere' } : {})
    const res = await call()
    tt.equal(res.statusCode, 503, `status ${status}`)
    tt.same(res.json(), unavailable)
  }
  decisions.handle(() => { /* never answers: the gateway's timeout ends the wait */ })
  const slow = await call()
  tt.equal(slow.statusCode, 503)
  tt.same(slow.json(), unavailable)
  await decisions.close()
  const down = await call()
  tt.equal(down.statusCode, 503)
  tt.same(down.json(), unavailable)
})

t.test('with cache_seconds a decision is reused for the same caller, method, path and headers; without, asked each time', async (tt) => {
  const cached = await setUp(tt, { cache_seconds: 60, headers: ['x-store'] })
  answer(cached.decisions, 200)
  tt.equal((await cached.call({ 'x-store': 'a' })).statusCode, 200)
  tt.equal((await cached.call({ 'x-store': 'a' })).statusCode, 200)
  tt.equal(cached.decisions.seen.length, 1, 'the second request was a cache hit')
  answer(cached.decisions, 403)
  tt.equal((await cached.call({ 'x-store': 'b' })).statusCode, 403, 'another header value is asked')
  tt.equal((await cached.call({ 'x-store': 'b' })).statusCode, 403, 'a deny is cached too')
  tt.equal((await cached.call({ 'x-store': 'a' })).statusCode, 200, 'the cached allow still holds')
  tt.equal(cached.decisions.seen.length, 2)

  const uncached = await setUp(tt, {})
  answer(uncached.decisions, 200)
  await uncached.call()
  await uncached.call()
  tt.equal(uncached.decisions.seen.length, 2)
})

t.test('a cached decision expires cache_seconds after it was stored, then the service is asked again', async (tt) => {
  // lru-cache reads the clock through performance.now(): moved on here instead of waiting out the minute.
  const now = performance.now.bind(performance)
  let ahead = 0
  performance.now = () => now() + ahead
  tt.teardown(() => { performance.now = now })
  const { decisions, call } = await setUp(tt, { cache_seconds: 60 })
  answer(decisions, 200)
  tt.equal((await call()).statusCode, 200)
  ahead = 59_000
  tt.equal((await call()).statusCode, 200)
  tt.equal(decisions.seen.length, 1, 'still within its 60 s: a cache hit')
  answer(decisions, 403)
  ahead = 61_000
  tt.equal((await call()).statusCode, 403, 'expired: the new decision is asked for')
  tt.equal(decisions.seen.length, 2)
})

t.test('a cached decision is not reused for a token of the same client with other scopes', async (tt) => {
  const { decisions, env } = await setUp(tt, { cache_seconds: 60 })
  const { app } = buildPolicyApp({ env, routes: [{ url: '/t', chain: [[auth, {}], [externalAuth, { url: `${decisions.url}/decide`, timeout_ms: 5000, cache_seconds: 60 }]] }] })
  tt.teardown(() => app.close())
  const wide = await mint(env.serviceKey, serviceClaims())
  const narrow = await mint(env.serviceKey, serviceClaims('svc_pay', 'org_parent', 'commerce:payment-intents.read'))
  decisions.handle((_req, res, body) => {
    const { principal } = JSON.parse(body) as { principal: { scopes: string[] } }
    res.writeHead(principal.scopes.includes('commerce:payment-intents.create') ? 200 : 403)
    res.end()
  })
  const call = async (token: string) => (await app.inject({ url: '/t', headers: { authorization: `Bearer ${token}` } })).statusCode
  tt.equal(await call(wide), 200)
  tt.equal(await call(narrow), 403, 'the narrower token is asked about, not given the wider one\'s allow')
  tt.equal(await call(wide), 200)
  tt.equal(decisions.seen.length, 2, 'each token asked once, then cached')
})

t.test('a cached decision of one path is not reused on another path of the same token, alternating', async (tt) => {
  const { decisions, env } = await setUp(tt, { cache_seconds: 60 })
  const { app } = buildPolicyApp({ env, routes: [{ url: '/s/:id', chain: [[auth, {}], [externalAuth, { url: `${decisions.url}/decide`, timeout_ms: 5000, cache_seconds: 60 }]] }] })
  tt.teardown(() => app.close())
  const token = await mint(env.serviceKey, serviceClaims())
  decisions.handle((_req, res, body) => {
    res.writeHead((JSON.parse(body) as { path: string }).path === '/s/a' ? 200 : 403)
    res.end()
  })
  const call = async (path: string) => (await app.inject({ url: path, headers: { authorization: `Bearer ${token}` } })).statusCode
  tt.same([await call('/s/a'), await call('/s/b'), await call('/s/a'), await call('/s/b'), await call('/s/a?x=1')], [200, 403, 200, 403, 200])
  tt.equal(decisions.seen.length, 2, 'each path asked once, then cached')
})

t.test('a 503 is never cached', async (tt) => {
  const { decisions, call } = await setUp(tt, { cache_seconds: 60 })
  answer(decisions, 500)
  tt.equal((await call()).statusCode, 503)
  answer(decisions, 200)
  tt.equal((await call()).statusCode, 200)
  tt.equal(decisions.seen.length, 2)
})

t.test('without an auth step before it, the service is asked with principal null', async (tt) => {
  const decisions = await startBackend(tt, 'decisions')
  const env = await tokenEnv()
  const { app } = buildPolicyApp({ env, routes: [{ url: '/open', chain: [[externalAuth, { url: `${decisions.url}/decide`, timeout_ms: 5000 }]] }] })
  tt.teardown(() => app.close())
  answer(decisions, 200)
  const res = await app.inject({ url: '/open?page=2', headers: { authorization: 'Bearer not-sent' } })
  tt.equal(res.statusCode, 200)
  tt.same(JSON.parse(decisions.seen[0]?.body ?? ''), { method: 'GET', path: '/open', service: 'test', route: '/open', headers: {}, principal: null })
})
