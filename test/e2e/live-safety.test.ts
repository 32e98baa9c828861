import t from 'tap'
import { send, sendRawBytes } from '../helpers/exchange-http.js'
import { liveSetup, OTHER } from '../helpers/exchange-config.js'
import { TEST_ORG_HEADER } from '../helpers/service-modules-app.js'
import { until } from '../helpers/wait-for.js'

const json = (body: string): unknown => JSON.parse(body)

t.test('path escapes are refused with 400 and never reach any lane (F4)', async (t) => {
  const { base, laneA, laneB, laneX, hq } = await liveSetup(t)
  const corpus = [
    '/v1/stores/org_store_a/live/../org_store_b/live/x',
    '/v1/stores/org_store_a/live/items/../../org_store_x/live/x',
    '/v1/stores/org_store_a/live/%2e%2e/org_store_b/x',
    '/v1/stores/org_store_a/live/%2E%2E%2Forg_store_b',
    '/v1/stores/org_store_a/live/a%2F..%2Fb',
    '/v1/stores/org_store_a/live/..%5Cadmin',
    '/v1/stores/org_store_a/live/..\\admin',
    '/v1/stores/org_store_a/live/items/..;/admin',
    '/v1/stores/org_store_a/live/items;jsessionid=1',
    '/v1/stores/org_store_a/live/items%00.json',
    '/v1/stores/org_store_a/live//host/x',
    '/v1/stores/org_store_a/live/items//x',
    '/v1/stores/org_store_a/live/./items',
    '/v1/stores/org_store_a/live/%252e%252e/x',
    '/v1/stores/org_store_a/live/a%0d%0aX-Injected:%201',
  ]
  for (const path of corpus) {
    const res = await send(base, { path, headers: hq })
    t.same([res.status, (json(res.body) as { error: string }).error], [400, 'bad_request'], path)
  }
  // Malformed percent-encoding is refused by the router itself (fastify's own 400 body in a bare app).
  const malformed = await send(base, { path: '/v1/stores/org_store_a/live/%E0%A4%A', headers: hq })
  t.equal(malformed.status, 400)
  t.same([laneA.requests.length, laneB.requests.length, laneX.requests.length], [0, 0, 0])
})

t.test('a percent-encoded store id is refused: the authorized id is the forwarded one', async (t) => {
  const { base, laneA, hq } = await liveSetup(t)
  const res = await send(base, { path: '/v1/stores/org%5Fstore_a/live/items', headers: hq })
  t.equal(res.status, 400)
  t.equal(laneA.requests.length, 0)
})

t.test('safe encoded characters are forwarded canonically, below the lane prefix only', async (t) => {
  const { base, laneA, hq } = await liveSetup(t)
  const res = await send(base, { path: '/v1/stores/org_store_a/live/items/caf%C3%A9%20latte/%41bc/?q=a%2Fb', headers: hq })
  t.equal(res.status, 200)
  t.same(laneA.requests.map((r) => r.url), ['/stores/A/items/caf%C3%A9%20latte/Abc/?q=a%2Fb'])
})

t.test('stores that are unknown, not installed, lane-less or another organization\'s answer the same 404 (E1, E4)', async (t) => {
  const { base, laneA, laneX, hq } = await liveSetup(t)
  const bodyFor = (id: string): unknown => ({ error: 'store_not_found', store_org_id: id, message: 'Store not found or not accessible.' })
  for (const id of ['org_store_x', 'org_nope', 'org_store_idle', 'org_store_nolane']) {
    const res = await send(base, { path: `/v1/stores/${id}/live/items`, headers: hq })
    t.same([res.status, json(res.body)], [404, bodyFor(id)], id)
  }
  for (const id of ['127.0.0.1:6379', 'evil.com', 'a@evil', '%2F%2Fevil']) {
    const res = await send(base, { path: `/v1/stores/${id}/live/items`, headers: hq })
    t.equal(res.status, 404, id)
  }
  t.same([laneA.requests.length, laneX.requests.length], [0, 0])
  const own = await send(base, { path: '/v1/stores/org_store_x/live/items', headers: { [TEST_ORG_HEADER]: OTHER } })
  t.equal(own.status, 200, 'the owner reaches its own store')
})

t.test('a store of a child organization is reachable from its parent', async (t) => {
  const { base, hq } = await liveSetup(t)
  const res = await send(base, { path: '/v1/stores/org_store_c/live/items', headers: hq })
  t.equal(res.status, 404, 'store C has no lane in this setup')
  t.same(json(res.body), { error: 'store_not_found', store_org_id: 'org_store_c', message: 'Store not found or not accessible.' })
})

t.test('a body declared over max_body_bytes is refused with 413 before the lane is contacted (E3)', async (t) => {
  const { base, laneA, hq } = await liveSetup(t, { live: { max_body_bytes: 100 } })
  const res = await send(base, { method: 'POST', path: '/v1/stores/org_store_a/live/items', headers: { ...hq, 'content-type': 'application/json' }, body: 'x'.repeat(101) })
  t.same([res.status, json(res.body)], [413, { error: 'payload_too_large', message: 'The request body is larger than this route accepts.' }])
  t.equal(laneA.requests.length, 0)
})

t.test('a chunked body crossing max_body_bytes is cut off with 413', async (t) => {
  const { base, hq } = await liveSetup(t, { live: { max_body_bytes: 100 } })
  const res = await send(base, { method: 'POST', path: '/v1/stores/org_store_a/live/items', headers: { ...hq, 'transfer-encoding': 'chunked', 'content-type': 'text/plain' }, body: 'y'.repeat(5000) })
  t.same([res.status, json(res.body)], [413, { error: 'payload_too_large', message: 'The request body is larger than this route accepts.' }])
})

t.test('a body at the limit is relayed whole', async (t) => {
  const { base, laneA, hq } = await liveSetup(t, { live: { max_body_bytes: 100 } })
  const res = await send(base, { method: 'PUT', path: '/v1/stores/org_store_a/live/items', headers: { ...hq, 'content-type': 'text/plain' }, body: 'z'.repeat(100) })
  t.equal(res.status, 200)
  t.equal(laneA.requests[0]?.body, 'z'.repeat(100))
})

t.test('a caller that goes away aborts the lane request and its socket closes (F8)', async (t) => {
  const { base, laneA, hq } = await liveSetup(t)
  laneA.setMode('stall')
  const http = await import('node:http')
  const url = new URL(base)
  const req = http.request({ host: url.hostname, port: url.port, path: '/v1/stores/org_store_a/live/slow', headers: hq, agent: false })
  req.on('error', () => {})
  req.end()
  t.ok(await until(() => laneA.requests.length === 1 && laneA.openSockets() === 1), 'the lane got the request')
  req.destroy()
  // The pool may open a fresh idle connection afterwards; what matters is that the abandoned request's own
  // connection is closed (the lane sees the request aborted) and nothing beyond the pool's cap stays open.
  t.ok(await until(() => laneA.requests[0]?.connectionClosed === true), 'the lane request\'s connection was closed')
  t.ok(laneA.openSockets() <= 1, 'no connection leaked')
  laneA.setMode('ok')
  const res = await send(base, { path: '/v1/stores/org_store_a/live/items', headers: hq })
  t.equal(res.status, 200, 'the gateway still relays')
})

t.test('a hung lane does not hold up another store\'s lane (F10)', async (t) => {
  const { base, laneA, hq } = await liveSetup(t, { lane: { max_sockets: 2, response_timeout_ms: 5000 } })
  laneA.setMode('stall')
  const hung = [1, 2, 3, 4].map(() => send(base, { path: '/v1/stores/org_store_a/live/hang', headers: hq }).catch(() => undefined))
  t.ok(await until(() => laneA.requests.length === 2), 'lane A holds its two sockets')
  const res = await send(base, { path: '/v1/stores/org_store_b/live/items', headers: hq })
  t.equal(res.status, 200)
  t.equal(laneA.requests.length, 2, 'lane A never got more than its socket cap')
  laneA.setMode('ok')
  await laneA.close()
  await Promise.all(hung)
})

t.test('a request smuggling Content-Length with Transfer-Encoding is refused by the parser; the lane sees nothing (F3)', async (t) => {
  const { base, laneA } = await liveSetup(t)
  const raw = 'POST /v1/stores/org_store_a/live/items HTTP/1.1\r\nHost: x\r\nx-test-organization: org_hq\r\n' +
    'Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /v1/stores/org_store_a/live/smuggled HTTP/1.1\r\nHost: x\r\n\r\n'
  const answer = await sendRawBytes(base, raw)
  t.match(answer, /^HTTP\/1\.1 400 /)
  t.equal(laneA.requests.length, 0)
})

t.test('a request without a caller is refused before anything is relayed', async (t) => {
  const { base, laneA } = await liveSetup(t)
  const res = await send(base, { path: '/v1/stores/org_store_a/live/items' })
  t.same([res.status, json(res.body)], [401, { error: 'Unauthenticated.' }])
  t.equal(laneA.requests.length, 0)
})
