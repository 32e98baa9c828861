import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { promisify } from 'node:util'
import t from 'tap'
import { gatewayOnConfig, gatewayPki } from '../helpers/own-config-gateway.js'
import type { SpawnedGateway } from '../helpers/spawn-gateway.js'
import { curl, h2Request, httpsGet, sClient } from '../helpers/tls-clients.js'
import { startBackend, type Backend } from '../helpers/upstream-servers.js'

/**
 * HTTP/2 on the TLS listener (issue 21, `server.http2: true`) on a real `lanegate start`: ALPN offers h2 and
 * http/1.1 on one port; the token endpoint, a proxied route with auth and a rate limit, the refusals and a
 * streamed relay answer the same over node:http2 and curl --http2 as over HTTP/1.1, and the HTTP/1.1 backend
 * gets no HTTP/2 pseudo-headers.
 */

const RW_HASH = '$scrypt$ln=15,r=8,p=1$VJNnriFV4HtjoqLcU/KggA$Oy75w3bu2mvI4sOD5uRaI5BRff89ZEbX9nciP5f4w3U'
const execFileAsync = promisify(execFile)
const { pki, ca, pair } = gatewayPki(t, 'H2 CA')
const till = pki.issue('till', 'till-1', { usage: 'client' })
const otherTill = pki.issue('other-till', 'till-2', { usage: 'client' })

let gateway: SpawnedGateway
let backend: Backend
let token = ''

t.before(async () => {
  backend = await startBackend(t, 'pricing')
  backend.handle((req, res) => {
    if (req.url === '/stream') {
      res.writeHead(200, { 'content-type': 'text/plain', connection: 'keep-alive', 'keep-alive': 'timeout=5', 'x-backend': 'yes' })
      let n = 0
      const next = (): void => {
        n++
        res.write(`chunk ${n}\n`)
        if (n < 5) setTimeout(next, 5)
        else res.end()
      }
      next()
      return
    }
    res.writeHead(200, { 'content-type': 'application/json', 'x-backend': 'yes' })
    res.end(JSON.stringify({ url: req.url, method: req.method }))
  })
  const started = await gatewayOnConfig(t, (dataDir) => `
server:
  data_dir: ${dataDir}
  tls: { ${pair}, client_ca_file: ${pki.caCert} }
  http2: true
admin: false
issuer: { issuer: https://localhost:8443 }
scopes:
  pricing:read: { description: Read prices }
organizations:
  - id: org_hq
service_accounts:
  - { client_id: reader, organization: org_hq, scopes: [pricing:read], secrets: [ { created: "2026-11-01", hash: "${RW_HASH}" } ] }
rate_limits:
  three-per-client: { key: client, points: 3, window_seconds: 3600 }
services:
  pricing:
    type: proxy
    prefix: /pricing
    envelope: exchange
    upstream: { targets: [ "${backend.url}" ] }
    policies: [ { auth: {} }, { scope: { all: [pricing:read] } } ]
    routes:
      read: { methods: [GET, POST], path: "/prices/*" }
      stream: { methods: [GET], path: /stream }
      limited: { methods: [GET], path: /limited, policies: [ { rate-limit: { limit: three-per-client } } ] }
  tills:
    type: proxy
    prefix: /tills
    envelope: exchange
    upstream: { targets: [ "${backend.url}" ] }
    routes:
      till: { methods: [GET], path: /prices/1, policies: [ { client-certificate: { subjects: [till-1] } } ] }
`, { admin: false })
  gateway = started.gateway
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: 'reader', client_secret: 'demo-exchange-secret' }).toString()
  const issued = await h2Request(gateway.base, ca, '/oauth/token', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form })
  t.equal(issued.status, 200)
  token = (JSON.parse(issued.body) as { access_token: string }).access_token
})

/** The headers both protocols must agree on (date, request id and connection-specific ones differ by nature). */
function comparable (headers: Record<string, string | string[] | undefined>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const name of ['content-type', 'cache-control', 'www-authenticate', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'retry-after', 'x-backend', 'content-length']) {
    if (headers[name] !== undefined) out[name] = headers[name]
  }
  return out
}

async function both (path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<void> {
  const h2 = await h2Request(gateway.base, ca, path, { method, headers })
  const h1 = await httpsGet(`${gateway.base}${path}`, { ca, agent: false, method, headers })
  t.equal(h2.alpn, 'h2')
  t.equal(h1.protocol !== null, true)
  t.same({ status: h2.status, body: h2.body, headers: comparable(h2.headers) }, { status: h1.status, body: h1.body, headers: comparable(h1.headers) }, `${method} ${path}`)
  t.equal(typeof h2.headers['x-request-id'], 'string')
}

t.test('the same answers over h2 and HTTP/1.1: health, refusals in their envelopes, a proxied route', async (t) => {
  await both('/healthz')
  await both('/pricing/prices/1')
  await both('/pricing/prices/1', { authorization: 'Bearer nonsense' })
  await both('/pricing/nowhere', { authorization: `Bearer ${token}` })
  await both('/pricing/prices/1?x=1', { authorization: `Bearer ${token}` })
  // (node:https would resolve the dot segment itself: over h2 alone.)
  const dots = await h2Request(gateway.base, ca, '/pricing/prices/%2e%2e/admin', { headers: { authorization: `Bearer ${token}` } })
  t.same([dots.status, JSON.parse(dots.body)], [400, { error: 'bad_request', message: 'The path is not accepted: dot segments are not allowed.' }])
  const bad = await h2Request(gateway.base, ca, '/oauth/token', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials&client_id=reader&client_secret=wrong' })
  t.same([bad.status, JSON.parse(bad.body)], [401, { error: 'invalid_client', error_description: 'Client authentication failed.' }])
})

t.test('X-RateLimit-* and Retry-After over h2 as over HTTP/1.1', async (t) => {
  const auth = { authorization: `Bearer ${token}` }
  const first = await h2Request(gateway.base, ca, '/pricing/limited', { headers: auth })
  t.same([first.status, first.headers['x-ratelimit-limit'], first.headers['x-ratelimit-remaining']], [200, '3', '2'])
  const second = await httpsGet(`${gateway.base}/pricing/limited`, { ca, agent: false, headers: auth })
  t.same([second.status, second.headers['x-ratelimit-limit'], second.headers['x-ratelimit-remaining']], [200, '3', '1'])
  await h2Request(gateway.base, ca, '/pricing/limited', { headers: auth })
  const refusedH2 = await h2Request(gateway.base, ca, '/pricing/limited', { headers: auth })
  const refusedH1 = await httpsGet(`${gateway.base}/pricing/limited`, { ca, agent: false, headers: auth })
  t.equal(refusedH2.status, 429)
  t.same(JSON.parse(refusedH2.body), JSON.parse(refusedH1.body))
  t.same([refusedH2.headers['x-ratelimit-limit'], refusedH2.headers['x-ratelimit-remaining']], ['3', '0'])
  t.match(refusedH2.headers['retry-after'], /^\d+$/)
  t.equal(refusedH1.status, 429)
})

t.test('the HTTP/1.1 backend gets the request without HTTP/2 pseudo-headers, with the gateway\'s traceparent', async (t) => {
  const before = backend.seen.length
  const answer = await h2Request(gateway.base, ca, '/pricing/prices/7?fields=a', { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{"price":"1.99"}' })
  t.same([answer.status, JSON.parse(answer.body)], [200, { url: '/prices/7?fields=a', method: 'POST' }])
  const seen = backend.seen[before]
  t.equal(seen?.body, '{"price":"1.99"}')
  t.same(Object.keys(seen?.headers ?? {}).filter((name) => name.startsWith(':')), [])
  t.equal(seen?.headers.host, new URL(backend.url).host)
  t.match(seen?.headers.traceparent, /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/)
  t.equal(seen?.headers.authorization, undefined)
})

t.test('a streamed relay on an h2 stream: the whole body, connection-specific headers dropped', async (t) => {
  const answer = await h2Request(gateway.base, ca, '/pricing/stream', { headers: { authorization: `Bearer ${token}` } })
  t.equal(answer.status, 200)
  t.equal(answer.body, 'chunk 1\nchunk 2\nchunk 3\nchunk 4\nchunk 5\n')
  t.equal(answer.headers['x-backend'], 'yes')
  t.same(['connection', 'keep-alive', 'transfer-encoding'].filter((name) => answer.headers[name] !== undefined), [])
})

t.test('curl --http2 and --http1.1 on one port; s_client sees ALPN h2', async (t) => {
  const h2 = await curl(['--http2', '--cacert', pki.caCert, '-H', `authorization: Bearer ${token}`, `${gateway.base}/pricing/prices/3`])
  t.equal(h2.code, 0, h2.stderr)
  t.match(h2.headers, /^HTTP\/2 200/)
  t.same(JSON.parse(h2.body), { url: '/prices/3', method: 'GET' })
  const h1 = await curl(['--http1.1', '--cacert', pki.caCert, `${gateway.base}/healthz`])
  t.match(h1.headers, /^HTTP\/1\.1 200/)
  const alpn = await sClient(gateway.port, ['-CAfile', pki.caCert, '-alpn', 'h2,http/1.1'])
  t.match(alpn.output, /ALPN protocol: h2/)
})

t.test('token requests on one h2 connection: a secret verified there is not a pass for a wrong one after it', async (t) => {
  // One curl, three transfers on one connection (--next keeps it): good secret, wrong secret, good again. The
  // connection's client slot remembers the first; the second must still be refused.
  const form = (secret: string): string => `grant_type=client_credentials&client_id=reader&client_secret=${secret}`
  const transfer = (secret: string): string[] => ['--http2', '--cacert', pki.caCert, '-s', '-o', '/dev/null', '-w', '%{http_version} %{http_code} %{num_connects}\n', '-d', form(secret), `${gateway.base}/oauth/token`]
  const { stdout } = await execFileAsync('curl', [...transfer('demo-exchange-secret'), '--next', ...transfer('wrong'), '--next', ...transfer('demo-exchange-secret')])
  t.same(stdout.trim().split('\n'), ['2 200 1', '2 401 0', '2 200 0'], 'HTTP/2; one connection made, then reused; the wrong secret refused on it')
})

t.test('mutual TLS over h2: the client-certificate policy reads the verified certificate of the session', async (t) => {
  const cert = readFileSync(till.cert)
  const key = readFileSync(till.key)
  const ok = await h2Request(gateway.base, ca, '/tills/prices/1', { cert, key })
  t.same([ok.alpn, ok.status, JSON.parse(ok.body)], ['h2', 200, { url: '/prices/1', method: 'GET' }])
  const none = await h2Request(gateway.base, ca, '/tills/prices/1')
  t.same([none.status, JSON.parse(none.body)], [401, { error: 'client_certificate_required', message: 'This route requires a client certificate signed by the gateway\'s client CA.' }])
  const other = await h2Request(gateway.base, ca, '/tills/prices/1', { cert: readFileSync(otherTill.cert), key: readFileSync(otherTill.key) })
  t.same([other.status, JSON.parse(other.body)], [403, { error: 'client_certificate_not_allowed', message: 'The client certificate is not allowed on this route.' }])
})
