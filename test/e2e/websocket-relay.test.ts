import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { send } from '../helpers/exchange-http.js'
import { spawnGateway, type SpawnedGateway } from '../helpers/spawn-gateway.js'
import { letTimePass, until, waitFor } from '../helpers/wait-for.js'
import { deadPort } from '../helpers/upstream-servers.js'
import { startWsBackend, type WsBackend } from '../helpers/ws-backend.js'
import { closeOf, nextMessage, openWs } from '../helpers/ws-client.js'

/**
 * WebSocket relay on `type: proxy` routes with `websocket:` (issue 22, items 1-3) through a real `lanegate start`,
 * with the `ws` package as client and backend: the route's chain runs on the upgrade request (a refusal is the
 * ordinary answer in the route's envelope, nothing upgraded), the backend's handshake gets the gateway's headers,
 * frames pass both ways, the limits close with 1009 and 1001, and a route without `websocket` never upgrades.
 */

const RW_HASH = '$scrypt$ln=15,r=8,p=1$VJNnriFV4HtjoqLcU/KggA$Oy75w3bu2mvI4sOD5uRaI5BRff89ZEbX9nciP5f4w3U'
const RO_HASH = '$scrypt$ln=15,r=8,p=1$OkLffbHby4aOyVk43lqjbw$+vKJ3tlYmuYoe3DRP2rDXKz21gCtClj+y0AKee1E54g'

const config = (backend: WsBackend, dead: number, dataDir: string): string => `
server: { data_dir: ${dataDir}, request_timeout_ms: 1500, headers_timeout_ms: 1000 }
admin: { port: 0 }
issuer: { issuer: http://localhost:8080 }
scopes:
  pricing:read: { description: Read prices }
  pricing:write: { description: Write prices }
organizations:
  - id: org_hq
    stores: [ { id: org_store_1 } ]
  - id: org_other
    stores: [ { id: org_store_9 } ]
service_accounts:
  - { client_id: pricing-rw, organization: org_hq, scopes: [pricing:read, pricing:write], secrets: [ { created: "2026-11-01", hash: "${RW_HASH}" } ] }
  - { client_id: pricing-ro, organization: org_hq, scopes: [pricing:read], secrets: [ { created: "2026-11-01", hash: "${RO_HASH}" } ] }
rate_limits:
  two-per-client: { key: client, points: 2, window_seconds: 60 }
services:
  events:
    type: proxy
    prefix: /events
    envelope: exchange
    upstream: { targets: [ "${backend.url}/base" ], credential: Bearer upstream-token }
    websocket: { idle_timeout_seconds: 120 }
    policies: [ { auth: {} } ]
    routes:
      stream: { methods: [GET], path: "/stream/*", websocket: true, policies: [ { scope: { all: [pricing:read] } } ] }
      admin: { methods: [GET], path: "/admin/*", websocket: true, policies: [ { scope: { all: [pricing:write] } } ] }
      users: { methods: [GET], path: "/users/*", websocket: true, policies: [ { token-type: { allow: [user] } } ] }
      store: { methods: [GET], path: "/stores/:store_org_id/*", websocket: true, policies: [ { organization: { param: store_org_id } } ] }
      limited: { methods: [GET], path: "/limited/*", websocket: true, policies: [ { rate-limit: { limit: two-per-client } } ] }
      small: { methods: [GET], path: "/small/*", websocket: { max_message_bytes: 1024, idle_timeout_seconds: 2 } }
      plain: { methods: [GET], path: "/plain/*" }
      capped: { methods: [GET], path: "/capped/*", websocket: true, policies: [ { connection-limit: { key: client, max: 2 } } ] }
  gone:
    type: proxy
    prefix: /gone
    envelope: exchange
    upstream: { targets: [ "http://127.0.0.1:${dead}" ], retry: { attempts: 1 } }
    policies: [ { auth: {} } ]
    routes:
      stream: { methods: [GET], path: "/*", websocket: true }
`

let gateway: SpawnedGateway
let backend: WsBackend
let rw: string
let ro: string
let wsBase: string

async function tokenFor (clientId: string, secret: string): Promise<string> {
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret })
  const res = await fetch(`${gateway.base}/oauth/token`, { method: 'POST', body: form })
  return ((await res.json()) as { access_token: string }).access_token
}

const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` })

t.before(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-ws-'))
  backend = await startWsBackend(t)
  const file = join(dir, 'gateway.yaml')
  await writeFile(file, config(backend, await deadPort(), join(dir, 'data')))
  gateway = await spawnGateway({ config: file })
  wsBase = gateway.base.replace('http:', 'ws:')
  t.teardown(async () => {
    gateway.child.kill('SIGTERM')
    await gateway.exited
    await rm(dir, { recursive: true, force: true })
  })
  rw = await tokenFor('pricing-rw', 'demo-exchange-secret')
  ro = await tokenFor('pricing-ro', 'demo-content-secret')
})

t.test('an allowed upgrade relays text and binary both ways; the backend gets the gateway\'s headers, never the caller\'s token', async (t) => {
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736'
  const opened = await openWs(`${wsBase}/events/stream/prices?sku=1`, {
    headers: { ...bearer(rw), 'x-request-id': 'ws-req-1', traceparent: `00-${traceId}-00f067aa0ba902b7-01`, cookie: 'session=secret' },
    protocols: ['chat.v1', 'chat.v2'],
  })
  if (!opened.open) throw new Error(`not upgraded: ${opened.status} ${opened.body}`)
  const ws = opened.ws
  t.equal(opened.protocol, 'chat.v2', 'the backend\'s chosen subprotocol reaches the caller')
  ws.send('hello')
  t.same(await nextMessage(ws), { data: Buffer.from('hello'), binary: false })
  ws.send(Buffer.from([0, 1, 2, 255]))
  t.same(await nextMessage(ws), { data: Buffer.from([0, 1, 2, 255]), binary: true })
  const handshake = backend.handshakes.at(-1)!
  t.equal(handshake.url, '/base/stream/prices?sku=1')
  const h = handshake.headers
  t.same({
    authorization: h.authorization,
    cookie: h.cookie,
    'x-forwarded-for': h['x-forwarded-for'],
    'x-request-id': h['x-request-id'],
    traceparent: (h.traceparent as string).slice(0, 36),
    'sec-websocket-protocol': h['sec-websocket-protocol'],
  }, {
    authorization: 'Bearer upstream-token',
    cookie: undefined,
    'x-forwarded-for': '127.0.0.1',
    'x-request-id': 'ws-req-1',
    traceparent: `00-${traceId}-`,
    'sec-websocket-protocol': 'chat.v1,chat.v2',
  })
  ws.close(4000, 'bye')
  const backendSide = backend.sockets.at(-1)!
  const closed = await closeOf(backendSide)
  t.same([closed.code, closed.reason], [4000, 'bye'], 'the caller\'s close code and reason reach the backend')
})

t.test('a 1 MiB message passes both ways, binary and text', async (t) => {
  const opened = await openWs(`${wsBase}/events/stream/big`, { headers: bearer(rw) })
  if (!opened.open) throw new Error('not upgraded')
  const big = Buffer.alloc(1024 * 1024, 7)
  opened.ws.send(big)
  const echoed = await nextMessage(opened.ws)
  t.equal(echoed.binary, true)
  t.ok(echoed.data.equals(big), '1 MiB binary echoed intact')
  const text = 'x'.repeat(1024 * 1024)
  opened.ws.send(text)
  const echoedText = await nextMessage(opened.ws)
  t.same([echoedText.binary, echoedText.data.length, echoedText.data.toString() === text], [false, 1024 * 1024, true])
  opened.ws.close()
})

t.test('each policy refuses the upgrade with its ordinary answer in the route\'s envelope; nothing is upgraded', async (t) => {
  const before = backend.handshakes.length
  const cases: Array<[string, Record<string, string>, number, unknown]> = [
    ['/events/stream/x', {}, 401, { error: 'Unauthenticated.' }],
    ['/events/admin/x', bearer(ro), 403, { error: 'Forbidden.' }],
    ['/events/users/x', bearer(rw), 401, undefined],
    ['/events/stores/org_store_9/x', bearer(rw), 403, undefined],
  ]
  for (const [path, headers, status, body] of cases) {
    const res = await openWs(`${wsBase}${path}`, { headers })
    if (res.open) throw new Error(`${path} was upgraded`)
    t.equal(res.status, status, path)
    if (body !== undefined) t.same(JSON.parse(res.body), body, `${path} body`)
    else t.equal(typeof (JSON.parse(res.body) as { error: unknown }).error, 'string', `${path} body in the exchange envelope`)
  }
  // The rate limit counts upgrade requests like any request: the third is 429.
  const first = await openWs(`${wsBase}/events/limited/x`, { headers: bearer(ro) })
  const second = await openWs(`${wsBase}/events/limited/x`, { headers: bearer(ro) })
  const third = await openWs(`${wsBase}/events/limited/x`, { headers: bearer(ro) })
  t.same([first.open, second.open, third.open], [true, true, false])
  if (!third.open) {
    t.equal(third.status, 429)
    const body = JSON.parse(third.body) as { retry_after: number }
    t.ok(body.retry_after >= 1 && body.retry_after <= 60, `retry_after ${body.retry_after}`)
    t.same(body, { error: 'Too many requests', retry_after: body.retry_after })
  }
  for (const r of [first, second]) if (r.open) r.ws.close()
  t.equal(backend.handshakes.length, before + 2, 'only the two admitted upgrades reached the backend')
})

t.test('a backend that refuses the upgrade is mirrored as upstream_error with its status; an unreachable one is 502', async (t) => {
  const refused = await openWs(`${wsBase}/events/stream/refuse`, { headers: bearer(rw) })
  if (refused.open) throw new Error('upgraded')
  t.same([refused.status, JSON.parse(refused.body)], [403, {
    error: 'upstream_error', message: 'The upstream service answered 403.', upstream_status: 403, upstream_body: '{"error":"not for you"}',
  }])
  const dead = await openWs(`${wsBase}/gone/x`, { headers: bearer(rw) })
  if (dead.open) throw new Error('upgraded')
  t.same([dead.status, JSON.parse(dead.body)], [502, {
    error: 'upstream_error', message: 'The upstream service could not be reached.', upstream_status: 0, upstream_failure: 'refused', upstream_body: '',
  }])
})

t.test('a route without websocket never upgrades: the request is served as an ordinary GET without Upgrade', async (t) => {
  const res = await openWs(`${wsBase}/events/plain/x`, { headers: bearer(rw) })
  if (res.open) throw new Error('upgraded')
  t.same([res.status, res.body, res.headers.connection], [200, 'plain /base/plain/x', 'close'])
  // The same on the wire with curl-like raw HTTP: no 101, the backend saw no Upgrade header.
  const raw = await send(gateway.base, { path: '/events/plain/y', headers: { ...bearer(rw), connection: 'upgrade', upgrade: 'websocket', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==', 'sec-websocket-version': '13' } })
  t.same([raw.status, raw.body], [200, 'plain /base/plain/y'])
})

t.test('access_token in the query authenticates a WebSocket route, never reaches the backend and is never logged', async (t) => {
  const opened = await openWs(`${wsBase}/events/stream/q?a=1&access_token=${rw}&b=2`)
  if (!opened.open) throw new Error(`not upgraded: ${opened.status} ${opened.body}`)
  t.equal(backend.handshakes.at(-1)!.url, '/base/stream/q?a=1&b=2')
  opened.ws.close()
  // Both ways at once is a 400; a route without websocket keeps refusing a query token (400).
  const both = await openWs(`${wsBase}/events/stream/q?access_token=${rw}`, { headers: bearer(rw) })
  t.same(both.open ? 'open' : [both.status, JSON.parse(both.body)], [400, { error: 'bad_request', message: 'Send the access token one way only: the Authorization header or the access_token parameter.' }])
  const plain = await send(gateway.base, { path: `/events/plain/x?access_token=${rw}`, headers: bearer(rw) })
  t.equal(plain.status, 400)
  t.ok(await until(() => gateway.output().includes('access_token=[Redacted]')), 'the request line is logged, redacted')
  t.notOk(gateway.output().includes(rw), 'the token appears in no log line')
  t.notOk(gateway.errors().includes(rw), 'nor on stderr')
})

t.test('a message over max_message_bytes closes with 1009; silence past idle_timeout_seconds closes with 1001', async (t) => {
  const opened = await openWs(`${wsBase}/events/small/a`, { headers: bearer(rw) })
  if (!opened.open) throw new Error('not upgraded')
  opened.ws.send(Buffer.alloc(1024, 1))
  t.equal((await nextMessage(opened.ws)).data.length, 1024, 'a message of exactly the limit passes')
  const closing = closeOf(opened.ws)
  opened.ws.send(Buffer.alloc(1025, 1))
  t.equal((await closing).code, 1009)

  const idle = await openWs(`${wsBase}/events/small/b`, { headers: bearer(rw) })
  if (!idle.open) throw new Error('not upgraded')
  const started = Date.now()
  const closed = await closeOf(idle.ws)
  t.same([closed.code, closed.reason], [1001, 'idle timeout'])
  t.ok(closed.at - started >= 1900, `not before the idle timeout (${closed.at - started} ms)`)
})

t.test('connection-limit: the connection over max gets 429 in the envelope before any upgrade; a closed one frees its place', async (t) => {
  const first = await openWs(`${wsBase}/events/capped/1`, { headers: bearer(rw) })
  const second = await openWs(`${wsBase}/events/capped/2`, { headers: bearer(rw) })
  const before = backend.handshakes.length
  const third = await openWs(`${wsBase}/events/capped/3`, { headers: bearer(rw) })
  t.same([first.open, second.open], [true, true])
  t.same(third.open ? 'open' : [third.status, JSON.parse(third.body)], [429, { error: 'Too many requests', max_connections: 2 }])
  t.equal(backend.handshakes.length, before, 'the refused upgrade never reached the backend')
  // Another client has its own count.
  const other = await openWs(`${wsBase}/events/capped/4`, { headers: bearer(ro) })
  t.equal(other.open, true)
  if (first.open) {
    const closed = closeOf(first.ws)
    first.ws.close()
    await closed
  }
  // The gateway sees the close a moment after the client does: tried again until a place is free.
  const fourth = await waitFor(async () => {
    const opened = await openWs(`${wsBase}/events/capped/5`, { headers: bearer(rw) })
    return opened.open ? opened : undefined
  }, { what: 'the place freed by the close to be taken again', intervalMs: 50 })
  t.equal(fourth.open, true, 'a place freed by a close is taken again')
  for (const r of [second, other, fourth]) if (r.open) r.ws.close()
})

t.test('an open WebSocket outlives server.request_timeout_ms (1.5 s here): the request timeout bounds the upgrade request only', async (t) => {
  const opened = await openWs(`${wsBase}/events/stream/long`, { headers: bearer(rw) })
  if (!opened.open) throw new Error('not upgraded')
  let closed = false
  opened.ws.once('close', () => { closed = true })
  // Staying open is an absence, and the time passing is the subject: twice the 1.5 s request timeout, plus a
  // margin (waking later only makes the test stricter).
  await letTimePass(2 * 1500 + 500)
  t.equal(closed, false, 'still open after twice the request timeout')
  opened.ws.send('still there')
  t.same(String((await nextMessage(opened.ws)).data), 'still there')
  opened.ws.close()
})
