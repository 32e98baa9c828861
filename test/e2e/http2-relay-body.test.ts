import t from 'tap'
import { gatewayPki } from '../helpers/own-config-gateway.js'
import { spawnGateway, type SpawnedGateway } from '../helpers/spawn-gateway.js'
import { gatewayFixture } from '../helpers/gateway-fixture.js'
import { curl, h2Request, httpsGet, type H2Answer } from '../helpers/tls-clients.js'
import { startBackend, type Backend } from '../helpers/upstream-servers.js'
import { startLaneSimulator, type LaneSimulator } from '../simulators/lane-simulator.js'

/**
 * Request bodies from HTTP/2 callers on a real `lanegate start` (the demo gateway.yaml with `tls` and `http2: true`,
 * plus an open `echo` proxy service): a relayed route streams the body to the HTTP/1.1 upstream whole — with a
 * Content-Length, without one (DATA frames until END_STREAM), and larger than h2's 64 KB flow-control window —
 * the live proxy relays a write's body to the lane, and a parsed route (payments, JSON) reads it.
 */
const { pki, ca, tls } = gatewayPki(t, 'H2 body CA')

let gateway: SpawnedGateway
let backend: Backend
let lane: LaneSimulator

t.before(async () => {
  backend = await startBackend(t, 'echo')
  backend.handle((_req, res, body) => {
    res.writeHead(200, { 'content-type': 'text/plain' })
    res.end(body)
  })
  lane = await startLaneSimulator({ name: 'lane-001' })
  t.teardown(() => lane.close())
  const config = await gatewayFixture()
    .set('server.tls', tls)
    .set('server.http2', true)
    .set('services.echo', {
      type: 'proxy',
      prefix: '/echo',
      envelope: 'exchange',
      upstream: { targets: [backend.url] },
      max_body_bytes: 1048576,
      routes: { post: { methods: ['POST'], path: '/*' } },
    })
    .write()
  t.teardown(() => config.remove())
  gateway = await spawnGateway({ config: config.file, env: { LANE_001_URL: lane.url } })
  t.teardown(() => { gateway.child.kill('SIGTERM'); return gateway.exited })
})

/** A service token from the token endpoint, asked for over h2. */
async function token (clientId: string): Promise<string> {
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: `${clientId}-secret` }).toString()
  const issued = await h2Request(gateway.base, ca, '/oauth/token', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form })
  if (issued.status !== 200) throw new Error(`token for ${clientId}: ${issued.status} ${issued.body}`)
  return (JSON.parse(issued.body) as { access_token: string }).access_token
}

/** POST /echo/<path> over h2; the upstream echoes the body it received. */
async function echo (path: string, body: string, withLength: boolean): Promise<H2Answer> {
  const headers: Record<string, string> = { 'content-type': 'text/plain' }
  if (withLength) headers['content-length'] = String(Buffer.byteLength(body))
  return h2Request(gateway.base, ca, `/echo/${path}`, { method: 'POST', headers, body })
}

t.test('an HTTP/2 POST with a Content-Length body is relayed whole to the HTTP/1.1 upstream', async (t) => {
  const answer = await echo('with-length', '0123456789', true)
  t.same([answer.alpn, answer.status, answer.body], ['h2', 200, '0123456789'])
  const seen = backend.seen.find((r) => r.url === '/with-length')
  t.same([seen?.method, seen?.headers['content-length'], seen?.body], ['POST', '10', '0123456789'])
})

t.test('an HTTP/2 POST without Content-Length (DATA frames until END_STREAM) is relayed whole', async (t) => {
  const answer = await echo('without-length', '0123456789', false)
  t.same([answer.alpn, answer.status, answer.body], ['h2', 200, '0123456789'])
  // (Framed chunked towards the HTTP/1.1 upstream, or with a Content-Length undici counts when the body had already
  // ended by the time the request was written: either way, the whole body.)
  t.equal(backend.seen.find((r) => r.url === '/without-length')?.body, '0123456789')
})

t.test('an HTTP/2 POST body larger than the 64 KB flow-control window is relayed whole, with and without Content-Length', async (t) => {
  const big = 'abcdefghijklmnopqrstuvwxyz0123456789\n'.repeat(5_600) // 207,200 bytes
  for (const withLength of [true, false]) {
    const answer = await echo(`big-${String(withLength)}`, big, withLength)
    t.equal(answer.status, 200, `Content-Length: ${String(withLength)}`)
    t.equal(answer.body, big, `Content-Length: ${String(withLength)}`)
  }
})

t.test('curl --http2 POSTs a body through the relayed route, as HTTP/1.1 does', async (t) => {
  const h2 = await curl(['--http2', '--cacert', pki.caCert, '-H', 'content-type: text/plain', '--data-binary', 'curl over h2', `${gateway.base}/echo/curl`])
  t.match(h2.headers, /^HTTP\/2 200/)
  t.same([h2.code, h2.status, h2.body], [0, 200, 'curl over h2'])
  const h1 = await httpsGet(`${gateway.base}/echo/h1`, { ca, agent: false, method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'over HTTP/1.1' })
  t.same([h1.status, h1.body], [200, 'over HTTP/1.1'])
})

t.test('an HTTP/2 POST through the live proxy reaches the lane with its body', async (t) => {
  const exchange = await token('demo-exchange')
  const body = JSON.stringify({ price: '1.99', note: 'over h2' })
  const answer = await h2Request(gateway.base, ca, '/v1/stores/org_store_001/live/prices/7', { method: 'POST', headers: { authorization: `Bearer ${exchange}`, 'content-type': 'application/json' }, body })
  t.equal(answer.status, 200)
  const echoed = JSON.parse(answer.body) as { lane: string, method: string, url: string, body: string, headers: Record<string, string> }
  t.same([echoed.lane, echoed.method, echoed.url, echoed.body, echoed.headers['content-type']], ['lane-001', 'POST', '/prices/7', body, 'application/json'])
})

t.test('an HTTP/2 JSON POST to a parsed route (payments) is read and answered', async (t) => {
  const checkout = await token('demo-checkout')
  const answer = await h2Request(gateway.base, ca, '/api/v1/ecommerce/payment-intents', {
    method: 'POST',
    headers: { authorization: `Bearer ${checkout}`, 'content-type': 'application/json', 'idempotency-key': 'h2-body-1' },
    body: JSON.stringify({ organization_id: 'org_hq_demo', amount: 1234, currency: 'usd' }),
  })
  t.equal(answer.status, 201)
  const { data } = JSON.parse(answer.body) as { data: { amount: number, currency: string, organization_id: string } }
  t.same([data.amount, data.currency, data.organization_id], [1234, 'usd', 'org_hq_demo'])
})
