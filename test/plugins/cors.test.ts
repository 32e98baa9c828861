import t from 'tap'
import cors from '../../plugins/cors/index.js'
import { testPolicy } from '../../src/pipeline/plugin-testing.js'

const options = { origins: ['https://shop.example'], methods: ['GET', 'POST'], headers: ['Authorization', 'Content-Type'], max_age_seconds: 600 }

t.test('a preflight from an allowed origin is answered 204 with the allowing headers and no body', async (t) => {
  const harness = await testPolicy(cors, options)
  t.teardown(harness.close)
  const res = await harness.inject({ method: 'OPTIONS', url: '/test', headers: { origin: 'https://shop.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' } })
  t.equal(res.statusCode, 204)
  t.equal(res.body, '')
  t.match(res.headers, {
    'access-control-allow-origin': 'https://shop.example',
    'access-control-allow-methods': 'GET, POST',
    'access-control-allow-headers': 'Authorization, Content-Type',
    'access-control-max-age': '600',
    vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers',
  })
  t.notOk('access-control-allow-credentials' in res.headers)
})

t.test('a preflight from another origin, for another method or header gets 204 without the allowing headers', async (t) => {
  const harness = await testPolicy(cors, options)
  t.teardown(harness.close)
  for (const headers of [
    { origin: 'https://evil.example', 'access-control-request-method': 'GET' },
    { origin: 'https://shop.example', 'access-control-request-method': 'DELETE' },
    { origin: 'https://shop.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-secret' },
  ]) {
    const res = await harness.inject({ method: 'OPTIONS', url: '/test', headers })
    t.equal(res.statusCode, 204)
    t.notOk('access-control-allow-origin' in res.headers, JSON.stringify(headers))
  }
})

t.test('an actual request from an allowed origin gets Allow-Origin and Vary; others pass without them', async (t) => {
  const harness = await testPolicy(cors, { ...options, credentials: true })
  t.teardown(harness.close)
  const allowed = await harness.inject({ url: '/test', headers: { origin: 'https://shop.example' } })
  t.equal(allowed.statusCode, 200)
  t.match(allowed.headers, { 'access-control-allow-origin': 'https://shop.example', 'access-control-allow-credentials': 'true', vary: 'Origin' })
  const other = await harness.inject({ url: '/test', headers: { origin: 'https://evil.example' } })
  t.equal(other.statusCode, 200)
  t.notOk('access-control-allow-origin' in other.headers)
})

t.test('a wildcard origin answers *', async (t) => {
  const harness = await testPolicy(cors, { origins: ['*'], methods: ['GET'] })
  t.teardown(harness.close)
  const res = await harness.inject({ url: '/test', headers: { origin: 'https://any.example' } })
  t.equal(res.headers['access-control-allow-origin'], '*')
})

t.test('a wildcard origin with credentials is refused by check()', async (t) => {
  await t.rejects(testPolicy(cors, { origins: ['*'], methods: ['GET'], credentials: true }),
    { message: 'policy "cors": origins: a wildcard origin "*" cannot be used with credentials: true; list the origins' })
})
