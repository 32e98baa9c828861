import t, { type Test } from 'tap'
import { apiKeyConfig, apiKeyHashes, KEYS } from '../helpers/api-key-config.js'
import { GatewayFixture } from '../helpers/gateway-fixture.js'
import { startBackend } from '../helpers/upstream-servers.js'

const hashes = await apiKeyHashes()

/** A recursion that never ends: JSONata runs the tail call in a loop, so only the time limit stops it. */
const LOOP = '( $loop := function($n) { $loop($n + 1) }; $loop(0) )'

async function gateway (t: Test) {
  const backend = await startBackend(t, 'orders')
  backend.handle((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end('{"id":"o-1"}')
  })
  const gw = await GatewayFixture.parse(apiKeyConfig({ hashes, backend: backend.url }))
    .set('services.pricing.routes', {
      looping_request: { methods: ['POST'], path: '/in', policies: [{ transform: { map_timeout_ms: 50, request: { body: { map: LOOP } } } }] },
      looping_answer: { methods: ['GET'], path: '/out', policies: [{ transform: { map_timeout_ms: 50, response: { body: { map: LOOP } } } }] },
      quick: { methods: ['POST'], path: '/quick', policies: [{ transform: { request: { body: { map: '{ "n": $count(items) }' } } } }] },
    })
    .boot(t)
  const send = (method: 'GET' | 'POST', url: string, payload?: unknown) => gw.app.inject({
    method,
    url: `/legacy/pricing${url}`,
    headers: { 'x-api-key': KEYS.till, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
  })
  return { backend, send }
}

t.test('a request mapping that never ends is stopped at map_timeout_ms: 500 transform_timeout, nothing sent', async (t) => {
  const { backend, send } = await gateway(t)
  const res = await send('POST', '/in', { items: [1, 2] })
  t.equal(res.statusCode, 500)
  t.same(res.json(), { error: 'transform_timeout', location: 'body', path: 'map', message: 'The request body\'s mapping ran longer than this route\'s limit (50 ms).' })
  t.same(backend.seen, [], 'the backend was not called')
  const quick = await send('POST', '/quick', { items: [1, 2] })
  t.equal(quick.statusCode, 200, 'the process goes on serving')
  t.same(backend.seen.map((s) => s.body), ['{"n":2}'])
})

t.test('an answer mapping that never ends is stopped at map_timeout_ms: 500 transform_timeout, the answer never shown', async (t) => {
  const { backend, send } = await gateway(t)
  const res = await send('GET', '/out')
  t.equal(res.statusCode, 500)
  t.same(res.json(), { error: 'transform_timeout', location: 'answer', path: 'map', message: 'The answer\'s mapping ran longer than this route\'s limit (50 ms).' })
  t.equal(backend.seen.length, 1)
})
