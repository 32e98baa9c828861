import { X509Certificate } from 'node:crypto'
import { readFileSync, renameSync, utimesSync, writeFileSync } from 'node:fs'
import { connect, type ClientHttp2Session } from 'node:http2'
import { Agent } from 'node:https'
import { join } from 'node:path'
import t from 'tap'
import { sample, scrape } from '../helpers/prometheus.js'
import { spawnGateway, type SpawnedGateway } from '../helpers/spawn-gateway.js'
import { h2Request, httpsGet } from '../helpers/tls-clients.js'
import { createTestPki, type Issued } from '../helpers/test-pki.js'
import { startBackend, type Backend } from '../helpers/upstream-servers.js'
import { waitFor } from '../helpers/wait-for.js'

/**
 * `server.tls` and `server.http2` with `server.workers: 2` on a real `lanegate start` (issue 21): each worker
 * terminates TLS on the shared port, so each one must load the pair, answer HTTPS and h2 alike, and take a new
 * pair — when the files change (each worker watches them) and when the primary gets SIGHUP (it tells every
 * worker) — while a load of keep-alive and new connections runs, with no request failing. A pair that does not
 * load is logged by every worker, which keeps its running pair. The worker's pid in the log lines tells which
 * worker did what.
 */

const RW_HASH = '$scrypt$ln=15,r=8,p=1$VJNnriFV4HtjoqLcU/KggA$Oy75w3bu2mvI4sOD5uRaI5BRff89ZEbX9nciP5f4w3U'
const pki = createTestPki('Workers TLS CA')
t.teardown(() => pki.remove())
const ca = readFileSync(pki.caCert)
const SANS = 'DNS:localhost,IP:127.0.0.1'
// Different lifetimes, so the expiry metric tells the pairs apart.
const first = pki.issue('first', 'localhost', { sans: SANS, days: 30 })
const second = pki.issue('second', 'localhost', { sans: SANS, days: 40 })
const third = pki.issue('third', 'localhost', { sans: SANS, days: 50 })
const certFile = join(pki.dir, 'live.crt')
const keyFile = join(pki.dir, 'live.key')

/**
 * Every file installed is padded to one size and given one mtime, so that a pair rewritten in place (same inode)
 * looks unchanged to the workers' stat poll: only SIGHUP can make them load it. PEM readers skip the blank lines.
 */
const CERT_BYTES = 4096
const KEY_BYTES = 1024
const MTIME_SECONDS = Math.floor(Date.now() / 1000) - 3600
function padded (file: string, size: number): Buffer {
  const pem = readFileSync(file)
  if (pem.length > size) throw new Error(`${file} is larger than ${size} bytes`)
  return Buffer.concat([pem, Buffer.alloc(size - pem.length, '\n')])
}

/** Puts `pair` in place the way a certificate manager does: new files beside, renamed over the old ones. */
function install (pair: Issued, key = pair.key): void {
  writeFileSync(`${keyFile}.new`, padded(key, KEY_BYTES))
  writeFileSync(`${certFile}.new`, padded(pair.cert, CERT_BYTES))
  utimesSync(`${keyFile}.new`, MTIME_SECONDS, MTIME_SECONDS)
  utimesSync(`${certFile}.new`, MTIME_SECONDS, MTIME_SECONDS)
  renameSync(`${keyFile}.new`, keyFile)
  renameSync(`${certFile}.new`, certFile)
}

/** Writes `pair` into the files in place, with their size and mtime unchanged: invisible to the stat poll. */
function rewriteUnseen (pair: Issued): void {
  writeFileSync(keyFile, padded(pair.key, KEY_BYTES))
  writeFileSync(certFile, padded(pair.cert, CERT_BYTES))
  utimesSync(keyFile, MTIME_SECONDS, MTIME_SECONDS)
  utimesSync(certFile, MTIME_SECONDS, MTIME_SECONDS)
}

install(first)

let gateway: SpawnedGateway
let backend: Backend
let token = ''

interface LogLine { pid: number, level: number, msg?: string, serial?: string, setting?: string }

function logLines (): LogLine[] {
  return gateway.output().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as LogLine)
}

/** The pids of the workers serving now (each logs its listener's address; the primary serves none). */
function workerPids (): number[] {
  return [...new Set(logLines().filter((l) => l.msg?.startsWith('Server listening at') === true).map((l) => l.pid))].sort()
}

/** Waits until every worker logged a line that `matches` (after the first `from` lines of output). */
async function everyWorkerLogged (what: string, matches: (line: LogLine) => boolean, from = 0): Promise<void> {
  await waitFor(() => {
    const logged = new Set(logLines().slice(from).filter(matches).map((l) => l.pid))
    return workerPids().every((pid) => logged.has(pid))
  }, { what: `every worker to log ${what}`, timeoutMs: 30_000, intervalMs: 50 })
}

/** Serials `count` new handshakes see (new connections: the primary hands them to the workers in turn). */
async function freshSerials (count: number): Promise<string[]> {
  const serials: string[] = []
  for (let i = 0; i < count; i++) serials.push((await httpsGet(`${gateway.base}/healthz`, { ca, agent: false })).serial)
  return serials
}

t.before(async () => {
  backend = await startBackend(t, 'pricing')
  backend.handle((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'x-backend': 'yes' })
    res.end(JSON.stringify({ url: req.url, method: req.method }))
  })
  const file = join(pki.dir, 'gateway.yaml')
  writeFileSync(file, `
server:
  data_dir: ${join(pki.dir, 'data')}
  workers: 2
  tls: { cert_file: live.crt, key_file: live.key }
  http2: true
admin: { host: 127.0.0.1, port: 0 }
issuer: { issuer: https://localhost:8443 }
scopes:
  pricing:read: { description: Read prices }
  pricing:write: { description: Change prices }
organizations:
  - id: org_hq
service_accounts:
  - { client_id: reader, organization: org_hq, scopes: [pricing:read], secrets: [ { created: "2026-11-01", hash: "${RW_HASH}" } ] }
services:
  pricing:
    type: proxy
    prefix: /pricing
    envelope: exchange
    upstream: { targets: [ "${backend.url}" ] }
    policies: [ { auth: {} } ]
    routes:
      read: { methods: [GET], path: "/prices/*", policies: [ { scope: { all: [pricing:read] } } ] }
      write: { methods: [POST], path: "/prices/*", policies: [ { scope: { all: [pricing:write] } } ] }
`)
  gateway = await spawnGateway({ config: file })
  t.teardown(() => { gateway.child.kill('SIGTERM'); return gateway.exited })
  await waitFor(() => workerPids().length === 2, { what: 'both workers to listen' })
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: 'reader', client_secret: 'demo-exchange-secret' }).toString()
  const issued = await httpsGet(`${gateway.base}/oauth/token`, { ca, agent: false, method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form })
  if (issued.status !== 200) throw new Error(`no token: ${issued.status} ${issued.body}`)
  token = (JSON.parse(issued.body) as { access_token: string }).access_token
})

/** The head without what differs by nature (date, request id) and HTTP/1.1's connection-specific fields. */
function head (headers: Record<string, unknown>): Record<string, unknown> {
  const varying = new Set(['date', 'x-request-id', 'connection', 'transfer-encoding'])
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !varying.has(name)))
}

t.test('HTTPS and h2 are answered by both workers: an authenticated request, and refusals in the route\'s envelope', async (t) => {
  const auth = { authorization: `Bearer ${token}` }
  const challenge = 'Bearer realm="lanegate"'
  const cases: Array<{ method: string, headers: Record<string, string>, status: number, body: string, head: Record<string, string> }> = [
    { method: 'GET', headers: auth, status: 200, body: '{"url":"/prices/1","method":"GET"}', head: { 'cache-control': 'no-store', 'content-type': 'application/json', 'x-backend': 'yes' } },
    { method: 'GET', headers: {}, status: 401, body: '{"error":"Unauthenticated."}', head: { 'cache-control': 'no-store', 'www-authenticate': challenge, 'content-type': 'application/json; charset=utf-8', 'content-length': '28' } },
    { method: 'POST', headers: auth, status: 403, body: '{"error":"Forbidden."}', head: { 'cache-control': 'no-store', 'www-authenticate': `${challenge}, error="insufficient_scope", scope="pricing:write"`, 'content-type': 'application/json; charset=utf-8', 'content-length': '22' } },
  ]
  const before = logLines().length
  // Four new connections per case and protocol: the primary's round-robin gives each worker its share.
  for (let i = 0; i < 4; i++) {
    for (const expected of cases) {
      const h1 = await httpsGet(`${gateway.base}/pricing/prices/1`, { ca, agent: false, method: expected.method, headers: expected.headers })
      const h2 = await h2Request(gateway.base, ca, '/pricing/prices/1', { method: expected.method, headers: expected.headers })
      t.equal(h2.alpn, 'h2')
      for (const [protocol, answer] of [['HTTP/1.1', h1], ['h2', h2]] as const) {
        t.same({ status: answer.status, body: answer.body, head: head(answer.headers) }, { status: expected.status, body: expected.body, head: expected.head }, `${protocol} ${expected.method} ${expected.status}`)
      }
    }
  }
  // Both workers answered (the request log lines carry the answering worker's pid).
  const answeredBy = new Set(logLines().slice(before).filter((l) => l.msg === 'request completed').map((l) => l.pid))
  t.same([...answeredBy].sort(), workerPids())
})

t.test('rotation reaches every worker, on a file change and on SIGHUP to the primary, under load: no request fails', async (t) => {
  const keepAlive = new Agent({ keepAlive: true, maxSockets: 4, ca })
  t.teardown(() => keepAlive.destroy())
  // One h2 session held open throughout: its streams must go on after both rotations.
  const session: ClientHttp2Session = connect(gateway.base, { ca })
  t.teardown(() => session.close())
  const auth = { authorization: `Bearer ${token}` }

  let stop = false
  let done = 0
  const failures: string[] = []
  const expectedBody = '{"url":"/prices/1","method":"GET"}'
  function h2Get (): Promise<{ status: number, body: string }> {
    return new Promise((resolve, reject) => {
      const stream = session.request({ ':path': '/pricing/prices/1', ...auth })
      let status = 0
      let body = ''
      stream.on('response', (headers) => { status = Number(headers[':status']) })
      stream.on('data', (chunk: Buffer) => { body += chunk.toString() })
      stream.on('end', () => resolve({ status, body }))
      stream.on('error', reject)
      stream.end()
    })
  }
  async function load (kind: 'fresh' | 'keep-alive' | 'h2'): Promise<void> {
    while (!stop) {
      try {
        const answer = kind === 'h2'
          ? await h2Get()
          : await httpsGet(`${gateway.base}/pricing/prices/1`, { ca, headers: auth, ...(kind === 'fresh' ? { agent: false } : { agent: keepAlive }) })
        if (answer.status !== 200 || answer.body !== expectedBody) failures.push(`${kind}: ${answer.status} ${answer.body}`)
      } catch (error) {
        failures.push(`${kind}: ${(error as Error).message}`)
      }
      done++
    }
  }
  const loads = (['fresh', 'fresh', 'keep-alive', 'keep-alive', 'keep-alive', 'h2'] as const).map((kind) => load(kind))
  const served = async (count: number): Promise<void> => {
    await waitFor(() => done >= count || failures.length > 0, { what: `${count} requests`, timeoutMs: 120_000, intervalMs: 20 })
  }

  await served(200)
  // The files renamed over: each worker's stat poll sees them.
  let from = logLines().length
  install(second)
  await everyWorkerLogged(`serial ${second.serial}`, (l) => l.serial === second.serial && l.msg === 'TLS certificate loaded for new connections', from)
  await served(done + 200)
  t.same(new Set(await freshSerials(8)), new Set([second.serial]), 'new handshakes after the file change')

  // Rewritten in place with size and mtime kept: the polls see nothing; SIGHUP to the primary reaches each worker.
  from = logLines().length
  rewriteUnseen(third)
  gateway.child.kill('SIGHUP')
  await everyWorkerLogged(`serial ${third.serial}`, (l) => l.serial === third.serial && l.msg === 'TLS certificate loaded for new connections', from)
  await served(done + 200)
  t.same(new Set(await freshSerials(8)), new Set([third.serial]), 'new handshakes after SIGHUP')

  await served(Math.max(2_000, done + 200))
  stop = true
  await Promise.all(loads)
  t.ok(done >= 2_000, `${done} requests`)
  t.same(failures, [])
  // The soonest not-after of the workers' pairs: the third pair's once every worker took it.
  const expiry = sample(await scrape(gateway.admin as string), 'lanegate_tls_certificate_expiry_timestamp_seconds', { certificate: 'listener' })
  t.equal(expiry, Math.floor(new Date(new X509Certificate(readFileSync(third.cert)).validTo).getTime() / 1000))
})

t.test('a pair that does not load is logged by every worker, and each keeps its running pair', async (t) => {
  const from = logLines().length
  // A key that is not the certificate's, renamed in: every worker's poll sees it, and refuses it.
  install(third, first.key)
  await everyWorkerLogged('the refused pair', (l) => l.msg?.startsWith('TLS certificate not rotated; the running pair stays: ') === true, from)
  const refusals = logLines().slice(from).filter((l) => l.msg?.startsWith('TLS certificate not rotated') === true)
  t.same(refusals.map((l) => [l.level, l.setting]), refusals.map(() => [50, 'server.tls.key_file']))
  t.match(refusals[0]?.msg, /live\.key: the key does not match the certificate in .*live\.crt$/)
  t.same(new Set(await freshSerials(8)), new Set([third.serial]))
  const answer = await h2Request(gateway.base, ca, '/pricing/prices/2', { headers: { authorization: `Bearer ${token}` } })
  t.same([answer.status, JSON.parse(answer.body)], [200, { url: '/prices/2', method: 'GET' }])
  install(third)
})
