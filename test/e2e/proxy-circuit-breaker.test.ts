import autocannon from 'autocannon'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { request as httpRequest } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { spawnGateway, type SpawnedGateway } from '../helpers/spawn-gateway.js'
import { startBackend, type Backend } from '../helpers/upstream-servers.js'
import { waitFor } from '../helpers/wait-for.js'

/**
 * Circuit breakers on a real `lanegate start` with `server.workers: 2`, under an autocannon load: a target that
 * answers 503 is opened and its traffic moves to its sibling; a single open target answers 503 circuit_open
 * without the backend being contacted, in both workers although only one of them saw the failures.
 */

const config = (dataDir: string, a: Backend, b: Backend, c: Backend, d: Backend, e: Backend, slow: Backend): string => `
server: { data_dir: ${dataDir}, workers: 2 }
admin: { port: 0 }
issuer: { issuer: http://localhost:8080 }
scopes: {}
services:
  pair:
    type: proxy
    prefix: /pair
    envelope: exchange
    upstream:
      targets: [ "${a.url}", "${b.url}" ]
      retry: { attempts: 1 }
      circuit_breaker: { consecutive_failures: 3, open_seconds: 10, max_open_seconds: 20, half_open_requests: 1 }
    routes:
      read: { methods: [GET], path: "/*" }
  single:
    type: proxy
    prefix: /single
    envelope: exchange
    upstream:
      targets: [ "${c.url}" ]
      circuit_breaker: { consecutive_failures: 2, open_seconds: 60, max_open_seconds: 60 }
    routes:
      read: { methods: [GET], path: "/*" }
  slow:
    type: proxy
    prefix: /slow
    envelope: exchange
    upstream:
      targets: [ "${slow.url}" ]
      circuit_breaker: { slow: { ms: 1000, percent: 50, min_requests: 3 }, open_seconds: 60, max_open_seconds: 60 }
    routes:
      read: { methods: [GET], path: "/*" }
  budgeted:
    type: proxy
    prefix: /budgeted
    envelope: exchange
    upstream:
      targets: [ "${d.url}", "${e.url}" ]
      retry: { attempts: 2, budget: { percent: 10, min_per_second: 2 } }
    routes:
      read: { methods: [GET], path: "/*" }
`

let gateway: SpawnedGateway
let a: Backend
let b: Backend
let c: Backend
let d: Backend
let e: Backend
let slow: Backend

t.before(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-circuit-'))
  ;[a, b, c, d, e, slow] = await Promise.all(['a', 'b', 'c', 'd', 'e', 'slow'].map((name) => startBackend(t, name)))
  const file = join(dir, 'gateway.yaml')
  await writeFile(file, config(join(dir, 'data'), a, b, c, d, e, slow))
  gateway = await spawnGateway({ config: file })
  t.teardown(async () => {
    gateway.child.kill('SIGTERM')
    await gateway.exited
    await rm(dir, { recursive: true, force: true })
  })
  await waitFor(() => (gateway.output().match(/Server listening at/g) ?? []).length === 2, { what: 'both workers listening' })
})

/** An autocannon run of `seconds` on `path`: answers by status class. */
async function load (path: string, seconds: number): Promise<{ total: number, ok: number, server: number }> {
  const result = await autocannon({ url: `${gateway.base}${path}`, connections: 4, duration: seconds })
  return { total: result['2xx'] + result.non2xx, ok: result['2xx'], server: result['5xx'] }
}

/** A GET on a fresh connection: the primary spreads those over both workers. */
function fresh (path: string): Promise<{ status: number, retryAfter: string | undefined, body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${gateway.base}${path}`, { agent: false }, (res) => {
      let body = ''
      res.on('data', (d: Buffer) => { body += d.toString() })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'] as string | undefined, body }))
    })
    req.on('error', reject)
    req.end()
  })
}

async function circuitState (target: string): Promise<string | undefined> {
  const text = await (await fetch(`${gateway.admin}/metrics`)).text()
  return new RegExp(`^lanegate_upstream_circuit_state\\{service="pair",target="${target}"\\} (\\d)$`, 'm').exec(text)?.[1]
}

t.test('a target answering 503 is opened after 3 failures, its traffic moves to the sibling, and it is closed once it recovers', async (t) => {
  a.handle((_req, res) => { res.writeHead(503).end('down') })
  const first = await load('/pair/items', 3)
  // Without the breaker a would get half of the load. With it: 3 failures per worker at most before an opening
  // (the other worker's observations usually open it first), plus what the 4 connections had in flight.
  t.ok(a.seen.length <= 3 * 2 + 4, `a received ${a.seen.length} of ${first.total} requests`)
  t.ok(first.total > 40, `${first.total} requests under load (without the breaker a would get half)`)
  t.equal(first.server, a.seen.length, 'every caller-visible 5xx is one of a\'s 503s')
  t.equal(await circuitState(a.url), '2', 'open (2) on the gauge')

  const seenBefore = a.seen.length
  const second = await load('/pair/items', 1)
  t.same({ server: second.server, reachedA: a.seen.length - seenBefore }, { server: 0, reachedA: 0 }, `no 5xx once open (${second.total} requests)`)
  t.ok(second.ok > 20, `${second.ok} answered by b`)

  a.handle((_req, res) => { res.end('a is back') })
  // Once open_seconds are over, a worker lets one real request through as a trial; it succeeds and closes a's
  // breaker, in both workers (the closing is shared).
  await waitFor(async () => (await fresh('/pair/items')).body === 'a is back', { what: 'a trial reaching the recovered target' })
  await waitFor(async () => {
    const bodies = new Set<string>()
    for (let i = 0; i < 8; i++) bodies.add((await fresh('/pair/x')).body)
    return bodies.has('a is back') && bodies.has('b')
  }, { what: 'both targets serving again' })
  t.equal(await circuitState(a.url), '0', 'closed (0) on the gauge, in every worker')
  t.match(gateway.output(), /upstream circuit opened/)
  t.match(gateway.output(), /upstream circuit closed/)
})

t.test('a single open target: 503 circuit_open with Retry-After from both workers, the backend not contacted', async (t) => {
  c.handle((_req, res) => { res.writeHead(500).end('broken') })
  // Two failures on one keep-alive connection: one worker sees them and opens the breaker.
  const keepAlive = new (await import('node:http')).Agent({ keepAlive: true, maxSockets: 1 })
  t.teardown(() => keepAlive.destroy())
  for (let i = 0; i < 2; i++) {
    const status = await new Promise<number>((resolve, reject) => {
      httpRequest(`${gateway.base}/single/x`, { agent: keepAlive }, (res) => { res.resume(); res.on('end', () => resolve(res.statusCode ?? 0)) }).on('error', reject).end()
    })
    t.equal(status, 500)
  }
  t.equal(c.seen.length, 2)
  // Fresh connections land on both workers: each answers circuit_open, the one that saw no failure included.
  await waitFor(async () => (await fresh('/single/y')).status === 503, { what: 'the opening applied' })
  const answers = await Promise.all(Array.from({ length: 12 }, () => fresh('/single/z')))
  t.same(new Set(answers.map((r) => JSON.stringify([r.status, r.body]))), new Set([JSON.stringify([503, JSON.stringify({
    error: 'upstream_error',
    upstream_status: 0,
    upstream_failure: 'circuit_open',
    upstream_body: '',
    message: 'The upstream service is failing: its circuit breaker is open.',
  })])]))
  t.ok(answers.every((r) => Number(r.retryAfter) >= 1 && Number(r.retryAfter) <= 60), `Retry-After ${answers.map((r) => r.retryAfter).join(',')}`)
  const loaded = await load('/single/w', 1)
  t.same({ server: loaded.server, ok: loaded.ok }, { server: loaded.total, ok: 0 }, `${loaded.total} requests, all 503`)
  t.equal(c.seen.length, 2, 'nothing reached the backend after the opening')
})

t.test('retry budget under load: with both targets failing every request, the backends get at most (1 + 10 %) × callers + 2/s (+ 1 s saved) per worker', async (t) => {
  for (const backend of [d, e]) backend.handle((req) => { req.socket.destroy() })
  const started = Date.now()
  const loaded = await load('/budgeted/items', 2)
  const seconds = Math.ceil((Date.now() - started) / 1000) + 1
  const atBackends = d.seen.length + e.seen.length
  // Each worker has its own budget: the floor (and the one second of it a budget may have saved) once per worker.
  const bound = 1.1 * loaded.total + 2 * 2 * (seconds + 1)
  t.ok(atBackends <= bound, `${atBackends} requests at the backends for ${loaded.total} callers (bound ${bound}; without a budget ${2 * loaded.total})`)
  t.ok(loaded.total > 50, `${loaded.total} callers under load`)
  t.equal(loaded.server, loaded.total, 'every caller got the original failure (502)')
})

t.test('a slow target (answers after 2 s) is opened by the slow rule, in both workers', async (t) => {
  slow.handle((_req, res) => { setTimeout(() => res.end('late'), 2_000) })
  const keepAlive = new (await import('node:http')).Agent({ keepAlive: true, maxSockets: 1 })
  t.teardown(() => keepAlive.destroy())
  // Three slow answers on one connection: one worker's window holds them and opens the breaker.
  for (let i = 0; i < 3; i++) {
    const body = await new Promise<string>((resolve, reject) => {
      httpRequest(`${gateway.base}/slow/x`, { agent: keepAlive }, (res) => {
        let text = ''
        res.on('data', (d: Buffer) => { text += d.toString() })
        res.on('end', () => resolve(text))
      }).on('error', reject).end()
    })
    t.equal(body, 'late', 'a slow answer is still relayed')
  }
  await waitFor(async () => (await fresh('/slow/y')).status === 503, { what: 'the slow rule\'s opening applied' })
  const answers = await Promise.all(Array.from({ length: 6 }, () => fresh('/slow/z')))
  t.same(answers.map((r) => [r.status, JSON.parse(r.body).upstream_failure]), Array.from({ length: 6 }, () => [503, 'circuit_open']))
  t.equal(slow.seen.length, 3, 'nothing reached the slow backend after the opening')
  t.match(gateway.output(), /"reason":"slow"[^\n]*upstream circuit opened|upstream circuit opened[^\n]*"reason":"slow"/)
})
