import t from 'tap'
import { buildTestApp, getToken, type TestApp } from '../helpers/build-app.js'

let gw: TestApp
t.before(async () => { gw = await buildTestApp() })
t.teardown(async () => { await gw.close() })

t.test('unknown routes answer JSON 404 in the envelope of the service whose prefix they fall under', async (t) => {
  const outside = await gw.app.inject({ method: 'GET', url: '/nowhere' })
  t.equal(outside.statusCode, 404)
  t.same(outside.json(), { error: 'Not found.' })
  const payments = await gw.app.inject({ method: 'GET', url: '/api/v1/ecommerce/nowhere' })
  t.equal(payments.statusCode, 404)
  t.same(payments.json(), { success: false, message: 'Not found.' })
  t.equal(payments.headers['cache-control'], 'no-store')
})

t.test('a known path with another method answers 405 with Allow, never reaching the handler', async (t) => {
  const res = await gw.app.inject({ method: 'DELETE', url: '/api/v1/ecommerce/payment-intents' })
  t.equal(res.statusCode, 405)
  t.equal(res.headers.allow, 'POST')
  t.same(res.json(), { success: false, message: 'Method not allowed.' })
  const token = await gw.app.inject({ method: 'GET', url: '/oauth/token' })
  t.equal(token.statusCode, 405)
})

t.test('every response has a request id and no-store, and no X-Powered-By', async (t) => {
  const res = await gw.app.inject({ method: 'GET', url: '/healthz' })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { status: 'ok', config_version: 1 })
  t.match(res.headers['x-request-id'], /^[0-9a-f-]{36}$/)
  t.equal(res.headers['cache-control'], 'no-store')
  t.notOk(res.headers['x-powered-by'])
  const given = await gw.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'req-abc.1' } })
  t.equal(given.headers['x-request-id'], 'req-abc.1')
  const unsafe = await gw.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'a b\u0000<script>' } })
  t.not(unsafe.headers['x-request-id'], 'a b\u0000<script>')
})

t.test('bad JSON and oversize bodies answer JSON errors in the service envelope', async (t) => {
  const token = await getToken(gw.app, 'demo-checkout')
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
  const bad = await gw.app.inject({ method: 'POST', url: '/api/v1/ecommerce/payment-intents', headers, payload: '{"amount": ' })
  t.equal(bad.statusCode, 400)
  t.same(bad.json(), { success: false, message: 'The request body is not valid JSON.' })
  const big = await gw.app.inject({ method: 'POST', url: '/api/v1/ecommerce/payment-intents', headers, payload: JSON.stringify({ description: 'x'.repeat(1_100_000) }) })
  t.equal(big.statusCode, 413)
  t.same(big.json(), { success: false, message: 'The request body is larger than this route accepts.' })
  const xml = await gw.app.inject({ method: 'POST', url: '/api/v1/ecommerce/payment-intents', headers: { ...headers, 'content-type': 'application/xml' }, payload: '<a/>' })
  t.equal(xml.statusCode, 415)
  t.same(xml.json(), { success: false, message: 'Unsupported Content-Type.' })
})

t.test('payments share one per-IP limit across routes with an exact countdown', async (t) => {
  const local = await buildTestApp()
  t.teardown(() => local.close())
  const token = await getToken(local.app, 'demo-checkout')
  const auth = { authorization: `Bearer ${token}` }
  const routes = [
    { method: 'GET' as const, url: '/api/v1/ecommerce/config/processor' },
    { method: 'GET' as const, url: '/api/v1/ecommerce/payment-intents/pi_unknown' },
    { method: 'GET' as const, url: '/api/v1/ecommerce/connected-account?organization_id=org_hq_demo' },
  ]
  const remaining: number[] = []
  for (let i = 0; i < 100; i++) {
    const route = routes[i % routes.length] as (typeof routes)[number]
    const res = await local.app.inject({ ...route, headers: auth, remoteAddress: '203.0.113.9' })
    t.equal(res.headers['x-ratelimit-limit'], '100')
    remaining.push(Number(res.headers['x-ratelimit-remaining']))
  }
  t.same(remaining, Array.from({ length: 100 }, (_, i) => 99 - i))
  const over = await local.app.inject({ method: 'GET', url: '/api/v1/ecommerce/config/processor', headers: auth, remoteAddress: '203.0.113.9' })
  t.equal(over.statusCode, 429)
  const retryAfter = Number(over.headers['retry-after'])
  t.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`)
  t.same(over.json(), { error: 'Too many requests', retry_after: retryAfter })
  // Another IP and a non-payments route are unaffected.
  const other = await local.app.inject({ method: 'GET', url: '/api/v1/ecommerce/config/processor', headers: auth, remoteAddress: '203.0.113.10' })
  t.equal(other.statusCode, 200)
  t.equal(other.headers['x-ratelimit-remaining'], '99')
  const contentToken = await getToken(local.app, 'demo-content')
  const content = await local.app.inject({ method: 'GET', url: '/public/v1/content', headers: { authorization: `Bearer ${contentToken}` }, remoteAddress: '203.0.113.9' })
  t.equal(content.statusCode, 200)
})

t.test('the API auth shapes of each service', async (t) => {
  const none = await gw.app.inject({ method: 'GET', url: '/api/v1/ecommerce/config/processor' })
  t.equal(none.statusCode, 401)
  t.same(none.json(), { success: false, message: 'Unauthenticated.' })
  t.equal(none.headers['www-authenticate'], 'Bearer realm="lanegate"')
  const content = await gw.app.inject({ method: 'GET', url: '/public/v1/content', headers: { authorization: 'Bearer not.a.jwt' } })
  t.equal(content.statusCode, 401)
  t.same(content.json(), { error: 'Unauthenticated.' })
  const statusToken = await getToken(gw.app, 'demo-status')
  const readOnly = await gw.app.inject({
    method: 'POST', url: '/api/v1/ecommerce/payment-intents', headers: { authorization: `Bearer ${statusToken}` }, payload: { organization_id: 'org_hq_demo', amount: 100, currency: 'usd' },
  })
  t.equal(readOnly.statusCode, 403)
  t.same(readOnly.json(), { success: false, message: 'This action requires the commerce:payment-intents.create scope.' })
  const canRead = await gw.app.inject({ method: 'GET', url: '/api/v1/ecommerce/config/processor', headers: { authorization: `Bearer ${statusToken}` } })
  t.equal(canRead.statusCode, 200)
  const checkout = await getToken(gw.app, 'demo-checkout')
  const noContent = await gw.app.inject({ method: 'GET', url: '/public/v1/content', headers: { authorization: `Bearer ${checkout}` } })
  t.equal(noContent.statusCode, 403)
  t.same(noContent.json(), { error: 'Forbidden.' })
})

t.test('a view-only account cannot obtain engage:content.create', async (t) => {
  const res = await gw.app.inject({
    method: 'POST', url: '/oauth/token', headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'grant_type=client_credentials&client_id=demo-content&client_secret=demo-content-secret&scope=engage%3Acontent.create',
  })
  t.equal(res.statusCode, 400)
  t.equal(res.json().error, 'invalid_scope')
})

t.test('no token, secret or Basic value appears in any log line', async (t) => {
  const token = await getToken(gw.app, 'demo-checkout')
  await gw.app.inject({ method: 'GET', url: `/api/v1/ecommerce/config/processor?access_token=${token}`, headers: { authorization: `Bearer ${token}` } })
  await gw.app.inject({ method: 'POST', url: '/oauth/token?client_secret=demo-checkout-secret', payload: 'grant_type=client_credentials' })
  const basic = Buffer.from('demo-status:demo-status-secret').toString('base64')
  await gw.app.inject({ method: 'POST', url: '/oauth/token', headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' }, payload: 'grant_type=client_credentials' })
  const all = gw.logs.join('')
  t.ok(all.length > 0, 'something was logged')
  for (const secret of [token, token.split('.')[2] as string, 'demo-checkout-secret', 'demo-status-secret', basic, 'Bearer ']) {
    t.notOk(all.includes(secret), `log contains no ${secret.slice(0, 12)}…`)
  }
})

t.test('a malformed percent-encoding in the URL answers 400 in the service envelope', async (t) => {
  const res = await gw.app.inject({ method: 'GET', url: '/v1/stores/org_store_001/live/%E0%A4%A' })
  t.equal(res.statusCode, 400)
  t.same(res.json(), { error: 'bad_request', message: 'The request URL is malformed.' })
  t.equal(res.headers['cache-control'], 'no-store')
})
