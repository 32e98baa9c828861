import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { send } from '../helpers/exchange-http.js'
import { spawnGateway, type SpawnedGateway } from '../helpers/spawn-gateway.js'
import { deadPort, startBackend, type Backend } from '../helpers/upstream-servers.js'
import { waitFor, waitForText } from '../helpers/wait-for.js'

/**
 * The `proxy` service type through a real `lanegate start` (config written to a temp dir) in front of real
 * backends on port 0: several proxy blocks in one gateway, each showing one behaviour of issue 13's "done when".
 */

/** Hashes of the demo secrets `demo-exchange-secret` and `demo-content-secret` (gateway.yaml). */
const RW_HASH = '$scrypt$ln=15,r=8,p=1$VJNnriFV4HtjoqLcU/KggA$Oy75w3bu2mvI4sOD5uRaI5BRff89ZEbX9nciP5f4w3U'
const RO_HASH = '$scrypt$ln=15,r=8,p=1$OkLffbHby4aOyVk43lqjbw$+vKJ3tlYmuYoe3DRP2rDXKz21gCtClj+y0AKee1E54g'

interface Setup { a: Backend, b: Backend, c: Backend, d: Backend, e: Backend, slow: Backend, deadF: number, dataDir: string }

const config = (s: Setup): string => `
server: { data_dir: ${s.dataDir} }
admin: { port: 0 }
issuer: { issuer: http://localhost:8080 }
scopes:
  pricing:read: { description: Read prices }
  pricing:write: { description: Write prices }
organizations:
  - id: org_hq
    stores: [ { id: org_store_1 } ]
  - id: org_other
service_accounts:
  - { client_id: pricing-rw, organization: org_hq, scopes: [pricing:read, pricing:write], secrets: [ { created: "2026-11-01", hash: "${RW_HASH}" } ] }
  - { client_id: pricing-ro, organization: org_hq, scopes: [pricing:read], secrets: [ { created: "2026-11-01", hash: "${RO_HASH}" } ] }
rate_limits:
  two-per-client: { key: client, points: 2, window_seconds: 60 }
services:
  pricing:
    type: proxy
    prefix: /legacy/pricing
    envelope: exchange
    upstream:
      targets: [ "${s.a.url}", { url: "${s.b.url}/base", weight: 1 } ]
      retry: { attempts: 1 }
      credential: Bearer upstream-token
    max_body_bytes: 64
    policies: [ { auth: {} } ]
    routes:
      read_prices: { methods: [GET, HEAD], path: "/prices/*", policies: [ { scope: { all: [pricing:read] } } ] }
      write_price: { methods: [PUT], path: "/prices/:sku", policies: [ { scope: { all: [pricing:write] } } ] }
      store_prices:
        methods: [GET]
        path: /stores/:store_org_id/prices
        policies: [ { scope: { all: [pricing:read] } }, { organization: { param: store_org_id } } ]
      limited: { methods: [GET], path: /limited, policies: [ { rate-limit: { limit: two-per-client } } ] }
  keep:
    type: proxy
    prefix: /legacy/keep
    envelope: plain
    upstream: { targets: [ "${s.a.url}" ], strip_prefix: false }
    policies: [ { auth: {} } ]
    routes:
      any: { methods: [GET], path: "/*" }
  writes:
    type: proxy
    prefix: /legacy/writes
    envelope: exchange
    upstream: { targets: [ "${s.e.url}", "http://127.0.0.1:${s.deadF}" ], retry: { attempts: 2, methods: [GET] } }
    policies: [ { auth: {} } ]
    routes:
      read: { methods: [GET], path: "/*" }
      write: { methods: [POST], path: "/*" }
  slow:
    type: proxy
    prefix: /legacy/slow
    envelope: exchange
    upstream: { targets: [ "${s.slow.url}" ], timeouts: { response_ms: 500 } }
    policies: [ { auth: {} } ]
    routes:
      read: { methods: [GET], path: "/*" }
  failover:
    type: proxy
    prefix: /legacy/failover
    envelope: exchange
    upstream:
      targets: [ "${s.c.url}", "${s.d.url}" ]
      retry: { attempts: 2 }
      health: { passive: { failures: 1, eject_seconds: 2 } }
    policies: [ { auth: {} } ]
    routes:
      read: { methods: [GET], path: "/*" }
`

/** Answers 503 with a text body for `/…/broken`, 404 JSON for `/…/missing`, else 200 `{ name, url }`. */
function pricingHandler (name: string) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const url = req.url ?? ''
    if (url.endsWith('/broken')) {
      res.writeHead(503, { 'content-type': 'text/plain' })
      res.end('pricing db down')
    } else if (url.endsWith('/missing')) {
      res.writeHead(404, { 'content-type': 'application/json' })
      res.end('{"error":"no price"}')
    } else {
      res.writeHead(200, { 'content-type': 'application/json', 'set-cookie': 'upstream=1', server: 'legacy/1.0' })
      res.end(JSON.stringify({ name, url }))
    }
  }
}

let gateway: SpawnedGateway
let s: Setup
let rw: string
let ro: string

async function tokenFor (clientId: string, secret: string): Promise<string> {
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret })
  const res = await fetch(`${gateway.base}/oauth/token`, { method: 'POST', body: form })
  return ((await res.json()) as { access_token: string }).access_token
}

const get = (path: string, token = rw, headers: Record<string, string> = {}): Promise<Response> =>
  fetch(`${gateway.base}${path}`, { headers: { authorization: `Bearer ${token}`, ...headers } })

async function answer (res: Response): Promise<{ status: number, body: unknown }> {
  const text = await res.text()
  return { status: res.status, body: text === '' ? '' : JSON.parse(text) as unknown }
}

t.before(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-proxy-'))
  const [a, b, c, d, e, slow] = await Promise.all(['A', 'B', 'C', 'D', 'E', 'slow'].map((name) => startBackend(t, name)))
  s = { a, b, c, d, e, slow, deadF: await deadPort(), dataDir: join(dir, 'data') } as Setup
  for (const backend of [a, b, c, d, e]) backend.handle(pricingHandler(backend.name))
  slow.handle(() => { /* accepts the request and never answers */ })
  const file = join(dir, 'gateway.yaml')
  await writeFile(file, config(s))
  gateway = await spawnGateway({ config: file })
  t.teardown(async () => {
    gateway.child.kill('SIGTERM')
    await gateway.exited
    await rm(dir, { recursive: true, force: true })
  })
  rw = await tokenFor('pricing-rw', 'demo-exchange-secret')
  ro = await tokenFor('pricing-ro', 'demo-content-secret')
})

t.test('round robin spreads GETs evenly over two targets; a target URL\'s path is prefixed', async (t) => {
  const before = [s.a.seen.length, s.b.seen.length]
  const names: string[] = []
  for (let i = 0; i < 6; i++) {
    const res = await get('/legacy/pricing/prices/000123')
    t.equal(res.status, 200)
    names.push((await res.json() as { name: string }).name)
  }
  t.same([s.a.seen.length - before[0]!, s.b.seen.length - before[1]!], [3, 3])
  t.same(names.filter((n) => n === 'A').length, 3)
  t.same(s.b.seen.at(-1)?.url, '/base/prices/000123')
})

t.test('the prefix is stripped and the query kept; strip_prefix: false sends the path as received', async (t) => {
  const res = await answer(await get('/legacy/keep/items/1?q=a%2Fb'))
  t.same(res, { status: 200, body: { name: 'A', url: '/legacy/keep/items/1?q=a%2Fb' } })
  const stripped = s.a.seen.length + s.b.seen.length
  await get('/legacy/pricing/prices/9?x=1')
  t.equal(s.a.seen.length + s.b.seen.length, stripped + 1)
  const last = [...s.a.seen, ...s.b.seen].find((r) => r.url.endsWith('/prices/9?x=1'))
  t.ok(last !== undefined && (last.url === '/prices/9?x=1' || last.url === '/base/prices/9?x=1'), `sent as ${last?.url}`)
})

t.test('caller credentials and forwarding claims never reach the target; the gateway sends its own', async (t) => {
  const res = await get('/legacy/keep/creds', rw, {
    cookie: 'session=secret',
    'x-forwarded-for': '6.6.6.6',
    'x-forwarded-host': 'evil.example',
    forwarded: 'for=6.6.6.6',
    'x-real-ip': '6.6.6.6',
    'x-api-key': 'kept',
  })
  t.equal(res.status, 200)
  const seen = s.a.seen.at(-1)?.headers ?? {}
  const picked = Object.fromEntries(['authorization', 'cookie', 'x-forwarded-for', 'x-forwarded-host', 'forwarded', 'x-real-ip', 'x-api-key', 'host']
    .map((name) => [name, seen[name]]))
  t.same(picked, {
    authorization: undefined, // the `keep` block has no credential: the caller's bearer token is dropped
    cookie: undefined,
    'x-forwarded-for': '127.0.0.1',
    'x-forwarded-host': undefined,
    forwarded: undefined,
    'x-real-ip': undefined,
    'x-api-key': 'kept',
    host: new URL(s.a.url).host,
  })
  // Upstream Set-Cookie and Server are not relayed either.
  t.same([res.headers.get('set-cookie'), res.headers.get('server')], [null, null])
})

t.test('the target gets the request\'s trace (the gateway\'s span as parent); the relay is counted under the block\'s name', async (t) => {
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736'
  const scrape = async (): Promise<number> => {
    const text = await (await fetch(`${gateway.admin!}/metrics`)).text()
    const line = text.split('\n').find((l) => l.startsWith('lanegate_upstream_requests_total{') && l.includes('upstream="keep"') && l.includes('outcome="ok"'))
    return line === undefined ? 0 : Number(line.split(' ').at(-1))
  }
  const before = await scrape()
  const res = await get('/legacy/keep/traced', rw, { traceparent: `00-${traceId}-00f067aa0ba902b7-01` })
  t.equal(res.status, 200)
  const sent = s.a.seen.filter((r) => r.url === '/legacy/keep/traced').at(-1)?.headers.traceparent
  t.match(sent, new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`))
  t.not(sent, `00-${traceId}-00f067aa0ba902b7-01`, 'the parent is the gateway\'s span, not the caller\'s')
  t.equal(await scrape() - before, 1)
})

t.test('the configured credential is sent as Authorization in place of the caller\'s', async (t) => {
  await get('/legacy/pricing/prices/000123', rw)
  const last = [...s.a.seen, ...s.b.seen].filter((r) => r.url.endsWith('/prices/000123')).at(-1)
  t.equal(last?.headers.authorization, 'Bearer upstream-token')
})

t.test('upstream 4xx and 5xx answers are mirrored as upstream_error with a bounded body', async (t) => {
  t.same(await answer(await get('/legacy/pricing/prices/broken')), {
    status: 503,
    body: { error: 'upstream_error', upstream_status: 503, upstream_body: 'pricing db down', message: 'The upstream service answered 503.' },
  })
  t.same(await answer(await get('/legacy/pricing/prices/missing')), {
    status: 404,
    body: { error: 'upstream_error', upstream_status: 404, upstream_body: '{"error":"no price"}', message: 'The upstream service answered 404.' },
  })
})

t.test('a target that never answers is 502 upstream_error timeout, never 504', async (t) => {
  t.same(await answer(await get('/legacy/slow/x')), {
    status: 502,
    body: { error: 'upstream_error', upstream_status: 0, upstream_failure: 'timeout', upstream_body: '', message: 'The upstream service did not answer in time.' },
  })
})

t.test('a POST is never retried: the one sent to the refusing target answers 502 refused', async (t) => {
  const before = s.e.seen.length
  const results = [await answer(await fetch(`${gateway.base}/legacy/writes/orders`, { method: 'POST', headers: { authorization: `Bearer ${rw}`, 'content-type': 'application/json' }, body: '{"n":1}' })),
    await answer(await fetch(`${gateway.base}/legacy/writes/orders`, { method: 'POST', headers: { authorization: `Bearer ${rw}`, 'content-type': 'application/json' }, body: '{"n":2}' }))]
  t.same(results.map((r) => r.status).sort(), [200, 502])
  t.same(results.find((r) => r.status === 502)?.body, {
    error: 'upstream_error', upstream_status: 0, upstream_failure: 'refused', upstream_body: '', message: 'The upstream service could not be reached.',
  })
  t.equal(s.e.seen.length - before, 1, 'the live target saw one POST only')
})

t.test('a GET that meets the refusing target is retried on the other one', async (t) => {
  const before = s.e.seen.length
  const statuses = []
  for (let i = 0; i < 4; i++) statuses.push((await get('/legacy/writes/orders')).status)
  t.same(statuses, [200, 200, 200, 200])
  t.equal(s.e.seen.length - before, 4)
})

t.test('a dead target is ejected (not tried while ejected), then taken back after eject_seconds', async (t) => {
  const port = s.d.port
  await s.d.close()
  const before = s.c.seen.length
  const statuses = []
  for (let i = 0; i < 4; i++) statuses.push((await get('/legacy/failover/x')).status)
  t.same(statuses, [200, 200, 200, 200], 'no GET failed: the first one to D was retried on C')
  t.equal(s.c.seen.length - before, 4)
  // The log reaches the pipe after the answers: wait for the line, then read it.
  await waitForText(gateway.output, 'upstream target ejected', { what: 'the ejection to be logged' })
  t.match(gateway.output(), /upstream target ejected/)

  // D answers again at once, but stays ejected for the rest of its window.
  const d = await startBackend(t, 'D', port)
  d.handle(pricingHandler('D'))
  for (let i = 0; i < 4; i++) await get('/legacy/failover/x')
  t.equal(d.seen.length, 0, 'an ejected target gets no requests')
  // The ejection window ending (its 2 s, eject_seconds) shows as D getting a request again; every answer meanwhile
  // is a 200 from the other targets.
  const answered: number[] = []
  await waitFor(async () => { answered.push((await get('/legacy/failover/x')).status); return d.seen.length >= 1 }, { what: 'D back in the rotation', intervalMs: 100 })
  t.same(answered.filter((s) => s !== 200), [], `every answer a 200 (${answered.length} of them) until D is back in the rotation`)
})

t.test('the path corpus is refused with 400 before any target sees it', async (t) => {
  const before = s.a.seen.length + s.b.seen.length
  const corpus = [
    '/legacy/pricing/prices/../../admin',
    '/legacy/pricing/prices/items/../../x',
    '/legacy/pricing/prices/%2e%2e/admin',
    '/legacy/pricing/prices/%2E%2E%2Fadmin',
    '/legacy/pricing/prices/a%2F..%2Fb',
    '/legacy/pricing/prices/..%5Cadmin',
    '/legacy/pricing/prices/..\\admin',
    '/legacy/pricing/prices/items/..;/admin',
    '/legacy/pricing/prices/items;jsessionid=1',
    '/legacy/pricing/prices/items%00.json',
    '/legacy/pricing/prices//host/x',
    '/legacy/pricing/prices/items//x',
    '/legacy/pricing/prices/./items',
    '/legacy/pricing/prices/%252e%252e/x',
    '/legacy/pricing/prices/a%0d%0aX-Injected:%201',
    '/legacy/%70ricing/prices/x',
  ]
  for (const path of corpus) {
    const res = await send(gateway.base, { path, headers: { authorization: `Bearer ${rw}` } })
    t.same([res.status, (JSON.parse(res.body) as { error: string }).error], [400, 'bad_request'], path)
  }
  t.equal(s.a.seen.length + s.b.seen.length, before, 'no target saw any of them')
})

t.test('only listed routes are served: anything else under the prefix is 404 in the service\'s envelope', async (t) => {
  t.same(await answer(await get('/legacy/pricing/admin')), { status: 404, body: { error: 'not_found', message: 'Not found.' } })
  const wrongMethod = await fetch(`${gateway.base}/legacy/pricing/prices/a/b`, { method: 'DELETE', headers: { authorization: `Bearer ${rw}` } })
  t.same([wrongMethod.status, wrongMethod.headers.get('allow')], [405, 'GET, HEAD'])
})

t.test('auth, scope, organization and limits are enforced before any target is contacted', async (t) => {
  const before = s.a.seen.length + s.b.seen.length
  t.same(await answer(await fetch(`${gateway.base}/legacy/pricing/prices/1`)), { status: 401, body: { error: 'Unauthenticated.' } })
  const write = await fetch(`${gateway.base}/legacy/pricing/prices/1`, { method: 'PUT', headers: { authorization: `Bearer ${ro}` }, body: '{}' })
  t.same(await answer(write), { status: 403, body: { error: 'Forbidden.' } })
  t.same(await answer(await get('/legacy/pricing/stores/org_other/prices', ro)), { status: 403, body: { error: 'Forbidden.' } })
  t.equal(s.a.seen.length + s.b.seen.length, before, 'refused requests reach no target')
  t.equal((await get('/legacy/pricing/stores/org_store_1/prices', ro)).status, 200, 'a store of the caller\'s tree is relayed')

  t.same([(await get('/legacy/pricing/limited')).status, (await get('/legacy/pricing/limited')).status], [200, 200])
  t.same(await answer(await get('/legacy/pricing/limited')), { status: 429, body: { error: 'Too many requests', retry_after: 60 } })
})

t.test('a body declared over max_body_bytes is refused with 413 before any target is contacted', async (t) => {
  const before = s.a.seen.length + s.b.seen.length
  const res = await fetch(`${gateway.base}/legacy/pricing/prices/000123`, {
    method: 'PUT', headers: { authorization: `Bearer ${rw}`, 'content-type': 'application/json' }, body: JSON.stringify({ price: '1'.repeat(80) }),
  })
  t.same(await answer(res), { status: 413, body: { error: 'payload_too_large', message: 'The request body is larger than this route accepts.' } })
  t.equal(s.a.seen.length + s.b.seen.length, before)
  const small = await fetch(`${gateway.base}/legacy/pricing/prices/000123`, {
    method: 'PUT', headers: { authorization: `Bearer ${rw}`, 'content-type': 'application/json' }, body: '{"price":"2.49"}',
  })
  t.equal(small.status, 200)
  t.same([...s.a.seen, ...s.b.seen].filter((r) => r.method === 'PUT').map((r) => r.body), ['{"price":"2.49"}'], 'only the body within the limit was relayed, as sent')
})
