import t from 'tap'
import { buildTestApp, type TestApp } from '../helpers/build-app.js'

/**
 * Every service path answers an unserved method alike (the demo gateway.yaml): 405 with `Allow` in the service's
 * envelope, TRACE included, refused before the body is read, as at the token endpoint. Before, TRACE answered 404
 * and a body was parsed first (a bad one answered 400 instead of 405).
 */
let gw: TestApp

t.before(async () => {
  gw = await buildTestApp()
})
t.teardown(() => gw.close())

const cases = [
  { method: 'TRACE', url: '/v1/stores/org_a/live/x', status: 405, allow: 'GET, HEAD, POST, PUT, PATCH, DELETE', body: { error: 'method_not_allowed', message: 'Method not allowed.' } },
  { method: 'TRACE', url: '/api/v1/ecommerce/payment-intents', status: 405, allow: 'POST', body: { success: false, message: 'Method not allowed.' } },
  { method: 'DELETE', url: '/api/v1/ecommerce/payment-intents', payload: '{bad', status: 405, allow: 'POST', body: { success: false, message: 'Method not allowed.' } },
  { method: 'TRACE', url: '/legacy/pricing/prices/1', status: 405, allow: 'GET, HEAD, PUT', body: { error: 'method_not_allowed', message: 'Method not allowed.' } },
  { method: 'PATCH', url: '/legacy/pricing/prices/1', payload: '{bad', status: 405, allow: 'GET, HEAD, PUT', body: { error: 'method_not_allowed', message: 'Method not allowed.' } },
] as const

for (const c of cases) {
  t.test(`${c.method} ${c.url}${'payload' in c ? ' with a body that is not JSON' : ''} → ${c.status} with Allow`, async (t) => {
    const payload = 'payload' in c ? c.payload : undefined
    const res = await gw.app.inject({ method: c.method, url: c.url, payload, headers: payload === undefined ? {} : { 'content-type': 'application/json' } })
    t.same({ status: res.statusCode, allow: res.headers.allow, body: res.json() }, { status: c.status, allow: c.allow, body: c.body })
  })
}

t.test('TRACE outside every service still answers 404', async (t) => {
  const res = await gw.app.inject({ method: 'TRACE', url: '/nowhere' })
  t.same({ status: res.statusCode, body: res.json() }, { status: 404, body: { error: 'Not found.' } })
})
