import t from 'tap'
import { bulkPattern } from '../simulators/lane-simulator.js'
import { send } from '../helpers/exchange-http.js'
import { liveSetup } from '../helpers/exchange-config.js'

t.test('a GET is relayed below the lane base path with the gateway\'s headers, and the answer streamed back', async (t) => {
  const { base, laneA, hq } = await liveSetup(t)
  const res = await send(base, { path: '/v1/stores/org_store_a/live/items/42?fields=price&x=1', headers: { ...hq, accept: 'application/json' } })
  t.equal(res.status, 200)
  t.equal(laneA.requests.length, 1)
  const echoed = JSON.parse(res.body) as { headers: Record<string, string> }
  // The gateway starts a W3C trace for a request without one and sends it on (test/e2e/trace-context).
  t.match(echoed.headers.traceparent, /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/)
  t.same(echoed, {
    lane: 'a',
    method: 'GET',
    url: '/stores/A/items/42?fields=price&x=1',
    headers: {
      accept: 'application/json',
      [Object.keys(hq)[0] as string]: 'org_hq',
      host: new URL(laneA.url).host,
      'x-forwarded-for': '127.0.0.1',
      'x-request-id': res.headers['x-request-id'],
      authorization: 'Lane lane-secret-a',
      connection: 'keep-alive',
      traceparent: echoed.headers.traceparent,
    },
    body: '',
  })
  t.equal(res.headers['content-type'], 'application/json')
})

t.test('a chunked lane body is streamed to the caller whole', async (t) => {
  const { base, hq } = await liveSetup(t)
  const res = await send(base, { path: '/v1/stores/org_store_a/live/feed/stream?chunks=5&interval=2', headers: hq })
  t.equal(res.status, 200)
  t.equal(res.aborted, false)
  t.equal(res.body, 'chunk 1\nchunk 2\nchunk 3\nchunk 4\nchunk 5\n')
  t.equal(res.headers['transfer-encoding'], 'chunked')
})

t.test('writes relay their method and body', async (t) => {
  const { base, laneB, hq } = await liveSetup(t)
  for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
    const body = JSON.stringify({ price: '1.99', method })
    const res = await send(base, { method, path: '/v1/stores/org_store_b/live/prices/7', headers: { ...hq, 'content-type': 'application/json' }, body })
    t.equal(res.status, 200, method)
    const echo = JSON.parse(res.body) as { method: string, url: string, body: string, headers: Record<string, string> }
    t.same([echo.method, echo.url, echo.body, echo.headers['content-type'], echo.headers['content-length']],
      [method, '/prices/7', body, 'application/json', String(body.length)], method)
  }
  t.equal(laneB.requests.length, 4)
})

t.test('HEAD is relayed as HEAD and answers without a body', async (t) => {
  const { base, laneA, hq } = await liveSetup(t)
  const res = await send(base, { method: 'HEAD', path: '/v1/stores/org_store_a/live/items', headers: hq })
  t.equal(res.status, 200)
  t.equal(res.body, '')
  t.same(laneA.requests.map((r) => [r.method, r.url]), [['HEAD', '/stores/A/items']])
})

t.test('hop-by-hop request headers never reach the lane (F1)', async (t) => {
  const { base, laneA, hq } = await liveSetup(t)
  const res = await send(base, {
    method: 'POST',
    path: '/v1/stores/org_store_a/live/echo',
    headers: {
      ...hq,
      connection: 'close, X-Secret',
      'x-secret': 'caller-only',
      'keep-alive': 'timeout=5',
      te: 'trailers',
      trailer: 'x-checksum',
      upgrade: 'websocket',
      'proxy-authorization': 'Basic cHJveHk6cHc=',
      'proxy-connection': 'keep-alive',
      'content-type': 'text/plain',
    },
    body: 'hello',
  })
  t.equal(res.status, 200)
  const names = laneA.requests[0]?.rawHeaderNames.map((n) => n.toLowerCase()).sort() ?? []
  // The caller's body came chunked; the gateway frames the relayed body itself (Content-Length or its own
  // Transfer-Encoding, its choice): exactly one framing header, and none of the caller's hop-by-hop ones.
  const framing: string[] = names.filter((n) => n === 'content-length' || n === 'transfer-encoding')
  t.equal(framing.length, 1, 'one framing header')
  t.same(names.filter((n) => !framing.includes(n)), [Object.keys(hq)[0], 'authorization', 'connection', 'content-type', 'host', 'traceparent', 'x-forwarded-for', 'x-request-id'].sort())
  t.equal(laneA.requests[0]?.headers.connection, 'keep-alive')
  t.equal(laneA.requests[0]?.body, 'hello')
})

t.test('the caller\'s credentials and forwarding claims are replaced by the gateway\'s (F2)', async (t) => {
  const { base, laneA, hq } = await liveSetup(t)
  const res = await send(base, {
    path: '/v1/stores/org_store_a/live/echo',
    headers: {
      ...hq,
      authorization: 'Bearer caller.jwt.token',
      cookie: 'session=caller',
      'x-forwarded-for': '6.6.6.6',
      'x-forwarded-host': 'evil.example',
      'x-forwarded-proto': 'https',
      forwarded: 'for=6.6.6.6;host=evil.example',
      'x-real-ip': '6.6.6.6',
      host: 'gateway.example',
    },
  })
  t.equal(res.status, 200)
  const seen = laneA.requests[0]?.headers ?? {}
  t.same({
    authorization: seen.authorization,
    cookie: seen.cookie,
    host: seen.host,
    xff: seen['x-forwarded-for'],
    xfh: seen['x-forwarded-host'],
    xfp: seen['x-forwarded-proto'],
    forwarded: seen.forwarded,
    realIp: seen['x-real-ip'],
  }, {
    authorization: 'Lane lane-secret-a',
    cookie: undefined,
    host: new URL(laneA.url).host,
    xff: '127.0.0.1',
    xfh: undefined,
    xfp: undefined,
    forwarded: undefined,
    realIp: undefined,
  })
  t.notMatch(JSON.stringify(laneA.requests), /caller\.jwt\.token/)
})

t.test('a lane without a credential gets no Authorization at all', async (t) => {
  const { base, laneA, hq } = await liveSetup(t, { lane: { credential: undefined } })
  await send(base, { path: '/v1/stores/org_store_a/live/echo', headers: { ...hq, authorization: 'Bearer caller.jwt.token' } })
  t.equal(laneA.requests[0]?.headers.authorization, undefined)
})

t.test('lane response headers: hop-by-hop, cookies, challenges and banners are dropped (F1, F5)', async (t) => {
  const { base, hq } = await liveSetup(t)
  const res = await send(base, { path: '/v1/stores/org_store_a/live/__sim/hop-headers', headers: hq })
  t.equal(res.status, 200)
  for (const name of ['x-lane-secret', 'keep-alive', 'trailer', 'upgrade', 'proxy-authenticate', 'set-cookie', 'www-authenticate', 'server', 'x-powered-by']) {
    t.equal(res.headers[name], undefined, name)
  }
  t.equal(res.headers['x-lane-visible'], 'yes')
  t.same(JSON.parse(res.body), { headers: 'sent' })
})

t.test('a lane 3xx is relayed, not followed, and its Location is not leaked (E6)', async (t) => {
  const { base, laneA, hq } = await liveSetup(t)
  const res = await send(base, { path: '/v1/stores/org_store_a/live/__sim/redirect', headers: hq })
  t.equal(res.status, 302)
  t.equal(res.headers.location, undefined)
  t.equal(res.body, 'moved')
  t.equal(laneA.requests.length, 1)
})

t.test('the response carries the gateway\'s request id, which the lane saw too', async (t) => {
  const { base, laneA, hq } = await liveSetup(t)
  const res = await send(base, { path: '/v1/stores/org_store_a/live/echo', headers: hq })
  t.type(res.headers['x-request-id'], 'string')
  t.equal(laneA.requests[0]?.headers['x-request-id'], res.headers['x-request-id'])
})

t.test('a large lane body reaches a caller that reads slowly whole and in order (pause and resume of the lane)', async (t) => {
  const { base, hq } = await liveSetup(t)
  const bytes = 16 * 1024 * 1024
  const http = await import('node:http')
  const url = new URL(base)
  const received = await new Promise<Buffer>((resolve, reject) => {
    const req = http.get({ host: url.hostname, port: url.port, path: `/v1/stores/org_store_a/live/big/bulk?bytes=${bytes}`, headers: hq, agent: false }, (res) => {
      const chunks: Buffer[] = []
      // Read nothing for a while: the gateway's socket to the caller fills up and the relay must pause the lane.
      res.pause()
      setTimeout(() => {
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        res.on('end', () => resolve(Buffer.concat(chunks)))
        res.resume()
      }, 300)
      res.on('error', reject)
    })
    req.on('error', reject)
  })
  t.equal(received.length, bytes)
  t.ok(received.equals(bulkPattern(bytes)), 'every byte, in order')
})
