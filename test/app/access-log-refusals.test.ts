import { once } from 'node:events'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { createServer } from 'node:http'
import { connect, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { buildTestApp, type TestApp } from '../helpers/build-app.js'
import { gatewayFixture, type GatewayFixture } from '../helpers/gateway-fixture.js'
import { waitFor } from '../helpers/wait-for.js'
import { startWsBackend } from '../helpers/ws-backend.js'
import { closeOf, openWs } from '../helpers/ws-client.js'

/** The scrypt hash of `demo-exchange-secret`. */
const SECRET_HASH = '$scrypt$ln=15,r=8,p=1$VJNnriFV4HtjoqLcU/KggA$Oy75w3bu2mvI4sOD5uRaI5BRff89ZEbX9nciP5f4w3U'
const ACCESS_FIELDS = ['method', 'route', 'status', 'refused_by', 'error']

/** A fresh folder for the access log, removed at teardown. */
async function logFolder (t: Test): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-refusals-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  return dir
}

/** The minimal gateway with one account (`reader`, scope `pricing:read`) and an access log to `dir/access.log`. */
function withReader (dir: string): GatewayFixture {
  return gatewayFixture('minimal')
    .set('scopes', { 'pricing:read': { description: 'Read prices' }, 'pricing:write': { description: 'Change prices' } })
    .set('organizations', [{ id: 'org_hq', stores: [{ id: 'org_store_1' }] }])
    .set('service_accounts', [{ client_id: 'reader', organization: 'org_hq', scopes: ['pricing:read'], secrets: [{ created: '2026-11-01', hash: SECRET_HASH }] }])
    .set('access_log', { fields: ACCESS_FIELDS, sinks: [{ type: 'file', path: join(dir, 'access.log') }] })
}

async function listening (t: Test, fixture: GatewayFixture): Promise<{ gw: TestApp, base: string, rewrite: (f: GatewayFixture) => Promise<void> }> {
  const written = await fixture.write()
  t.teardown(() => written.remove())
  const gw = await buildTestApp({ file: written.file, logLevel: 'warn' })
  t.teardown(() => gw.close())
  await gw.app.listen({ port: 0, host: '127.0.0.1' })
  return { gw, base: `127.0.0.1:${(gw.app.server.address() as AddressInfo).port}`, rewrite: written.write }
}

async function accessLines (path: string, count: number): Promise<unknown[]> {
  const text = await waitFor(async () => {
    const read = await readFile(path, 'utf8').catch(() => '')
    return read.split('\n').filter((l) => l !== '').length >= count ? read : undefined
  }, { what: `${count} access lines` })
  return text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as unknown)
}

async function tokenOf (gw: TestApp): Promise<string> {
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: 'reader', client_secret: 'demo-exchange-secret' })
  const res = await gw.app.inject({ method: 'POST', url: '/oauth/token', payload: form.toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } })
  return res.json<{ access_token: string }>().access_token
}

t.test('a WebSocket a reload closes names the recheck step that refused (scope), not the chain step at its index (auth)', async (t) => {
  const backend = await startWsBackend(t)
  // The rechecks are auth and scope; cors (first in the chain) is not rechecked, so scope is the rechecks' second
  // step and the chain's third.
  const route = (scope: string): unknown => ({ methods: ['GET'], path: '/*', websocket: true, policies: [{ scope: { all: [scope] } }] })
  const dir = await logFolder(t)
  const fixture = withReader(dir).set('services', {
    events: { type: 'proxy', prefix: '/events', envelope: 'exchange', upstream: { targets: [backend.url] }, websocket: { idle_timeout_seconds: 120 }, policies: [{ cors: { origins: ['https://till.example'], methods: ['GET'] } }, { auth: {} }], routes: { stream: route('pricing:read') } },
  })
  const { gw, base, rewrite } = await listening(t, fixture)
  const opened = await openWs(`ws://${base}/events/feed`, { headers: { authorization: `Bearer ${await tokenOf(gw)}` } })
  if (!opened.open) throw new Error(`not upgraded: ${opened.status} ${opened.body}`)
  const closing = closeOf(opened.ws)
  await rewrite(fixture.set('services.events.routes.stream', route('pricing:write')))
  t.equal((await gw.gateway.reload()).outcome, 'applied')
  const closed = await closing
  t.same([closed.code, closed.reason], [1008, 'forbidden'])
  const lines = await accessLines(join(dir, 'access.log'), 2)
  t.same(lines.at(-1), { method: 'GET', route: 'stream', status: 101, refused_by: 'scope', error: null })
})

/** A decision service (external-auth) that holds each request until `release()`, then answers 403. */
async function startHoldingDecider (t: Test): Promise<{ url: string, asked: Promise<void>, release: () => void }> {
  let asked: () => void = () => {}
  let release: () => void = () => {}
  const askedOnce = new Promise<void>((resolve) => { asked = resolve })
  const released = new Promise<void>((resolve) => { release = resolve })
  const server = createServer((req, res) => {
    req.resume()
    asked()
    void released.then(() => res.writeHead(403).end())
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => new Promise<void>((resolve) => { release(); server.closeAllConnections(); server.close(() => resolve()) }))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/decide`, asked: askedOnce, release }
}

t.test('a refusal decided after its client left is written to the access log, as metrics count it', async (t) => {
  const decider = await startHoldingDecider(t)
  const dir = await logFolder(t)
  const fixture = withReader(dir).set('services', {
    ext: { type: 'proxy', prefix: '/ext', envelope: 'exchange', upstream: { targets: ['http://127.0.0.1:9'] }, policies: [{ 'external-auth': { url: decider.url, timeout_ms: 30_000 } }], routes: { read: { methods: ['GET'], path: '/*' } } },
  })
  const { gw, base } = await listening(t, fixture)
  const [host, port] = base.split(':')
  const socket = connect(Number(port), host)
  await once(socket, 'connect')
  socket.write('GET /ext/item HTTP/1.1\r\nhost: gateway\r\n\r\n')
  await decider.asked
  socket.destroy()
  // The gateway's side of the connection closed: the refusal comes after its client left.
  await waitFor(async () => await new Promise<number>((resolve, reject) => { gw.app.server.getConnections((error, count) => { if (error === null) resolve(count); else reject(error) }) }) === 0, { what: 'the client\'s connection closed at the gateway' })
  decider.release()
  t.same(await accessLines(join(dir, 'access.log'), 1), [{ method: 'GET', route: 'read', status: 403, refused_by: 'external-auth', error: 'forbidden' }])
})

/** An outside policy that takes part in CORS preflights (as `cors` does) and refuses those without X-Till-Id. */
const PREFLIGHT_GATE = `export default {
  name: 'preflight-gate',
  description: 'Refuses preflights that carry no X-Till-Id.',
  schema: { type: 'object', additionalProperties: false },
  answersPreflight: true,
  create (_options, context) {
    return function gate (request) {
      if (request.method === 'OPTIONS' && request.headers['x-till-id'] === undefined) return context.refuse('forbidden')
    }
  },
}
`

t.test('a refused preflight names the preflight step that refused, not the chain step at its index', async (t) => {
  const dir = await logFolder(t)
  await writeFile(join(dir, 'preflight-gate.mjs'), PREFLIGHT_GATE)
  // The chain is auth, preflight-gate, cors; a preflight runs preflight-gate and cors only (the gate is its first step).
  const fixture = withReader(dir).set('plugins', [join(dir, 'preflight-gate.mjs')]).set('services', {
    ext: {
      type: 'proxy',
      prefix: '/ext',
      envelope: 'exchange',
      upstream: { targets: ['http://127.0.0.1:9'] },
      policies: [{ auth: {} }, { 'preflight-gate': {} }, { cors: { origins: ['https://till.example'], methods: ['GET'] } }],
      routes: { read: { methods: ['GET'], path: '/*' } },
    },
  })
  const { gw } = await listening(t, fixture)
  const res = await gw.app.inject({ method: 'OPTIONS', url: '/ext/item', headers: { origin: 'https://till.example', 'access-control-request-method': 'GET' } })
  t.equal(res.statusCode, 403)
  t.same(await accessLines(join(dir, 'access.log'), 1), [{ method: 'OPTIONS', route: 'read', status: 403, refused_by: 'preflight-gate', error: 'forbidden' }])
})
