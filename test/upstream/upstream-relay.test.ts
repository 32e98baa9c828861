import { createServer, type AddressInfo } from 'node:net'
import t from 'tap'
import { gzipSync } from 'node:zlib'
import { deadPort, startBackend, startRelay, testSettings, testUpstream } from '../helpers/upstream-servers.js'
import { waitFor } from '../helpers/wait-for.js'

t.test('headers: caller credentials and hop-by-hop never go upstream; the upstream credential does; Host is the target', async (t) => {
  const a = await startBackend(t, 'a')
  const upstream = testUpstream(t, testSettings([`${a.url}/base`], { credential: 'Bearer upstream-secret' }))
  const base = await startRelay(t, upstream)
  const res = await fetch(`${base}/x?q=1`, { headers: { authorization: 'Bearer caller', cookie: 'c=1', 'x-forwarded-for': '6.6.6.6', 'x-keep': 'yes', 'proxy-authorization': 'p' } })
  t.same([res.status, await res.text()], [200, 'a'])
  const seen = a.seen[0]
  t.same(seen?.url, '/base/x?q=1', 'the target base path is prefixed')
  t.same({
    authorization: seen?.headers.authorization,
    cookie: seen?.headers.cookie,
    host: seen?.headers.host,
    xff: seen?.headers['x-forwarded-for'],
    keep: seen?.headers['x-keep'],
    proxyAuth: seen?.headers['proxy-authorization'],
    requestId: seen?.headers['x-request-id'],
  }, {
    authorization: 'Bearer upstream-secret',
    cookie: undefined,
    host: `127.0.0.1:${a.port}`,
    xff: '127.0.0.1',
    keep: 'yes',
    proxyAuth: undefined,
    requestId: 'req-1',
  })
})

t.test('headers: cookies, challenges, banners and Location from upstream are not relayed', async (t) => {
  const a = await startBackend(t, 'a')
  a.handle((_req, res) => {
    res.writeHead(302, { location: 'http://10.0.0.1/inner', 'set-cookie': 's=1', server: 'legacy/1.0', 'x-ok': 'kept' })
    res.end()
  })
  const upstream = testUpstream(t, testSettings([a.url]))
  const base = await startRelay(t, upstream)
  const res = await fetch(`${base}/`, { redirect: 'manual' })
  t.same([res.status, res.headers.get('location'), res.headers.get('set-cookie'), res.headers.get('server'), res.headers.get('x-ok')], [302, null, null, null, 'kept'])
})

t.test('an upstream 4xx is mirrored with its status and a bounded, decoded body', async (t) => {
  const a = await startBackend(t, 'a')
  a.handle((_req, res) => {
    res.writeHead(409, { 'content-encoding': 'gzip', 'content-type': 'application/json' })
    res.end(gzipSync(JSON.stringify({ conflict: 'x'.repeat(200) })))
  })
  const upstream = testUpstream(t, testSettings([a.url]))
  const base = await startRelay(t, upstream, { maxErrorBodyBytes: 20 })
  const res = await fetch(`${base}/prices/1`, { method: 'PUT', body: '{}' })
  t.equal(res.status, 409)
  t.same(await res.json(), { error: 'upstream_error', upstream_status: 409, upstream_body: '{"conflict":"xxxxxxx [truncated]', message: 'The upstream service answered 409.' })
})

t.test('an upstream 503 is mirrored as 503', async (t) => {
  const a = await startBackend(t, 'a')
  a.handle((_req, res) => { res.writeHead(503).end('down for maintenance') })
  const upstream = testUpstream(t, testSettings([a.url]))
  const base = await startRelay(t, upstream)
  const res = await fetch(`${base}/`)
  t.same([res.status, await res.json()], [503, { error: 'upstream_error', upstream_status: 503, upstream_body: 'down for maintenance', message: 'The upstream service answered 503.' }])
})

t.test('an upstream that never answers is 502 with upstream_failure timeout, not 504', async (t) => {
  const stall = await startBackend(t, 'stall')
  stall.handle(() => {})
  const upstream = testUpstream(t, testSettings([stall.url], { timeouts: { connect_ms: 1000, response_ms: 200, body_idle_ms: 1000 } }))
  const base = await startRelay(t, upstream)
  const res = await fetch(`${base}/`)
  t.same([res.status, await res.json()], [502, { error: 'upstream_error', upstream_status: 0, upstream_failure: 'timeout', upstream_body: '', message: 'The upstream service did not answer in time.' }])
})

t.test('a refused connection is 502 with upstream_failure refused', async (t) => {
  const upstream = testUpstream(t, testSettings([`http://127.0.0.1:${await deadPort()}`]))
  const base = await startRelay(t, upstream)
  const res = await fetch(`${base}/`)
  t.same([res.status, await res.json()], [502, { error: 'upstream_error', upstream_status: 0, upstream_failure: 'refused', upstream_body: '', message: 'The upstream service could not be reached.' }])
})

// Issue 27: undici's HTTPParserError carries no code; it was reported as `unreachable`.
t.test('a target that answers with malformed HTTP is 502 with upstream_failure protocol (as docs/errors.md says)', async (t) => {
  const replies = [
    'GARBAGE\r\n\r\n',
    'HTTP/1.1 99x OK\r\n\r\n',
    'HTTP/1.1 200 OK\r\nBad Header: x\r\ncontent-length: 2\r\n\r\nok',
    'HTTP/1.1 200 OK\r\ncontent-length: abc\r\n\r\nok',
  ]
  for (const reply of replies) {
    const raw = createServer((socket) => { socket.once('data', () => { socket.end(reply) }) })
    await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve))
    t.teardown(() => { raw.close() })
    const upstream = testUpstream(t, testSettings([`http://127.0.0.1:${(raw.address() as AddressInfo).port}`]))
    const base = await startRelay(t, upstream)
    const res = await fetch(`${base}/`)
    t.same([res.status, await res.json()], [502, { error: 'upstream_error', upstream_status: 0, upstream_failure: 'protocol', upstream_body: '', message: 'The upstream service answered with an invalid response.' }], JSON.stringify(reply))
  }
})

t.test('a request body is streamed upstream and bounded: over the limit answers 413', async (t) => {
  const a = await startBackend(t, 'a')
  a.handle((_req, res, body) => { res.end(`got ${body.length}`) })
  const upstream = testUpstream(t, testSettings([a.url]))
  const base = await startRelay(t, upstream, { maxBodyBytes: 1000 })
  const ok = await fetch(`${base}/up`, { method: 'POST', body: 'x'.repeat(1000) })
  t.same([ok.status, await ok.text()], [200, 'got 1000'])
  const stream = new ReadableStream({
    start (controller) {
      controller.enqueue(new TextEncoder().encode('y'.repeat(800)))
      controller.enqueue(new TextEncoder().encode('y'.repeat(800)))
      controller.close()
    },
  })
  const tooLarge = await fetch(`${base}/up`, { method: 'POST', body: stream, duplex: 'half' } as RequestInit)
  t.same([tooLarge.status, await tooLarge.json()], [413, { error: 'payload_too_large', message: 'The request body is larger than this route accepts.' }])
})

t.test('in-flight counts return to zero after answers, failures and mirrored errors', async (t) => {
  const a = await startBackend(t, 'a')
  let mode = 'ok'
  a.handle((_req, res) => { if (mode === 'ok') res.end('a'); else res.writeHead(500).end('no') })
  const upstream = testUpstream(t, testSettings([a.url]))
  const base = await startRelay(t, upstream)
  await (await fetch(`${base}/`)).text()
  mode = 'fail'
  await (await fetch(`${base}/`)).text()
  t.equal(upstream.targets[0]?.inFlight, 0)
})

t.test('a request that timed out while queued for a connection is never sent, and its in-flight count is returned', async (t) => {
  const a = await startBackend(t, 'a')
  const held: Array<() => void> = []
  a.handle((req, res) => {
    if (req.url !== '/hold') return res.end('a')
    // The head and a first chunk at once (the relay is streaming, its timer stopped); the rest on release.
    res.writeHead(200)
    res.write('first ')
    held.push(() => res.end('held'))
  })
  const upstream = testUpstream(t, testSettings([a.url], { max_sockets: 1, timeouts: { connect_ms: 1000, response_ms: 150, body_idle_ms: 1000 } }))
  const base = await startRelay(t, upstream)
  const first = fetch(`${base}/hold`)
  await waitFor(() => held.length > 0, { what: 'the first request to hold the only socket' })
  const queued = await fetch(`${base}/queued`)
  t.same([queued.status, await queued.json()], [502, { error: 'upstream_error', upstream_status: 0, upstream_failure: 'timeout', upstream_body: '', message: 'The upstream service did not answer in time.' }])
  for (const release of held) release()
  t.equal(await (await first).text(), 'first held')
  // "Never sent": the one socket is free now, and the queue is first in, first out. A request still queued would
  // reach the target before the one sent next; that one arriving first shows the queue held nothing.
  t.equal(await (await fetch(`${base}/next`)).text(), 'a')
  t.same(a.seen.map((r) => r.url), ['/hold', '/next'], 'the queued request never reached the target')
  t.equal(upstream.targets[0]?.inFlight, 0)
})

t.test('undici\'s backstop timers: off for a request without a body (the attempt\'s own cover it), kept with one', async (t) => {
  const a = await startBackend(t, 'a')
  const upstream = testUpstream(t, testSettings([a.url], { timeouts: { connect_ms: 1000, response_ms: 700, body_idle_ms: 900 } }))
  const base = await startRelay(t, upstream)
  const target = upstream.targets[0]
  if (target === undefined) throw new Error('no target')
  // What the relay asks of the pool: each timer was an object undici kept for up to a second (see relay.ts).
  const asked: Array<{ method: string, headersTimeout: unknown, bodyTimeout: unknown }> = []
  const dispatch = target.pool.dispatch.bind(target.pool)
  target.pool.dispatch = (options, handler) => {
    asked.push({ method: options.method, headersTimeout: options.headersTimeout, bodyTimeout: options.bodyTimeout })
    return dispatch(options, handler)
  }
  const get = await fetch(`${base}/x`)
  t.same([get.status, await get.text()], [200, 'a'])
  const put = await fetch(`${base}/x`, { method: 'PUT', body: 'payload' })
  t.same([put.status, await put.text(), a.seen[1]?.body], [200, 'a', 'payload'])
  t.same(asked, [
    { method: 'GET', headersTimeout: 0, bodyTimeout: 0 },
    // With a body the pool's headers timeout (response_ms) stays, and the body's backstop is past both idle limits.
    { method: 'PUT', headersTimeout: undefined, bodyTimeout: 300_000 + 1_000 },
  ])
})
