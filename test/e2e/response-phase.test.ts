import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import t, { type Test } from 'tap'
import { repoPath } from '../helpers/paths.js'
import { spawnGateway, type SpawnedGateway } from '../helpers/spawn-gateway.js'
import { startBackend, type Backend } from '../helpers/upstream-servers.js'
import { waitFor } from '../helpers/wait-for.js'

/**
 * The response phase on a real `lanegate start`: the bundled `headers` policy (no `writeHead` patch left) and the
 * outside example plugin examples/plugins/audit-log.js (a head hook stamping `X-Audit-Id`, a sent hook appending a
 * JSON line) over in-process answers, refusals of later steps, and answers relayed by a `type: proxy` service.
 */
const HASH = '$scrypt$ln=15,r=8,p=1$OkLffbHby4aOyVk43lqjbw$+vKJ3tlYmuYoe3DRP2rDXKz21gCtClj+y0AKee1E54g'

/** An outside plugin asking for a copy of each answer's body (`captureBody`) and writing it, base64, to a file. */
const BODY_COPY = `
import { appendFileSync } from 'node:fs'
export default {
  name: 'body-copy',
  description: 'Writes a copy of each answer body to a file.',
  schema: { type: 'object', required: ['file'], properties: { file: { type: 'string' } }, additionalProperties: false },
  create (options, context) {
    const capture = (head) => { head.captureBody() }
    const write = (sent, request) => { appendFileSync(options.file, JSON.stringify({ id: String(request.id), body: sent.body === undefined ? null : sent.body.toString('base64') }) + '\\n') }
    return function bodyCopyStep (_request, reply) {
      context.onResponseHead(reply, capture)
      context.onResponseSent(reply, write)
    }
  },
}
`

const config = (dir: string, backend: Backend): string => `
plugins:
  - ${repoPath('examples/plugins/audit-log.js')}
  - ./body-copy.mjs
server: { data_dir: ${join(dir, 'data')} }
admin: { port: 0 }
issuer: { issuer: http://localhost:8080 }
scopes:
  engage:content.view: { description: Read published content }
organizations:
  - id: org_hq_demo
service_accounts:
  - { client_id: demo-content, organization: org_hq_demo, scopes: [engage:content.view], secrets: [ { created: "2026-11-01", hash: "${HASH}" } ] }
services:
  content:
    prefix: /public/v1
    envelope: plain
    policies:
      - audit-log: { file: ${join(dir, 'audit.log')} }
      - headers: { response: { set: { X-Frame-Options: DENY }, remove: [x-powered-by] } }
      - auth: {}
    routes:
      content_list:
        - scope: { all: [engage:content.view] }
    source_dir: ${repoPath('content')}
  pricing:
    type: proxy
    prefix: /legacy/pricing
    envelope: exchange
    upstream: { targets: [ "${backend.url}" ] }
    policies:
      - audit-log: { file: ${join(dir, 'audit.log')}, header: X-Pricing-Audit }
      - body-copy: { file: ${join(dir, 'bodies.log')} }
      - headers: { response: { set: { X-Frame-Options: DENY }, remove: [x-powered-by] } }
      - auth: {}
    routes:
      read: { methods: [GET], path: "/*" }
`

let gateway: SpawnedGateway
let dir: string
let token: string

t.before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lanegate-response-phase-'))
  const backend = await startBackend(t, 'pricing')
  backend.handle((req: IncomingMessage, res: ServerResponse) => {
    if (req.url === '/big') {
      res.writeHead(200, { 'content-type': 'text/plain' })
      res.end('x'.repeat(100 * 1024))
      return
    }
    res.writeHead(200, { 'content-type': 'application/json', 'x-powered-by': 'legacy/1.0', 'x-price-source': 'db' })
    res.end(JSON.stringify({ url: req.url }))
  })
  const file = join(dir, 'gateway.yaml')
  await writeFile(file, config(dir, backend))
  await writeFile(join(dir, 'body-copy.mjs'), BODY_COPY)
  gateway = await spawnGateway({ config: file })
  t.teardown(async () => {
    gateway.child.kill('SIGTERM')
    await gateway.exited
    await rm(dir, { recursive: true, force: true })
  })
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: 'demo-content', client_secret: 'demo-content-secret' })
  token = ((await (await fetch(`${gateway.base}/oauth/token`, { method: 'POST', body: form })).json()) as { access_token: string }).access_token
})

interface AuditLine { request_id: string, method: string, url: string, service: string, route: string, client: string | null, status: number, completed: boolean }

/** The audit line of `requestId`, waited for (the sent hook runs after the answer, so it may trail the client). */
async function auditLineOf (t: Test, requestId: string): Promise<Omit<AuditLine, 'request_id'>> {
  const line = await waitFor(async () => {
    const text = await readFile(join(dir, 'audit.log'), 'utf8').catch(() => '')
    return text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as AuditLine & { time: string, ms: number }).find((l) => l.request_id === requestId)
  }, { what: `the audit line of ${requestId}`, intervalMs: 50 })
  const { request_id: _id, time, ms, ...rest } = line
  t.ok(!Number.isNaN(Date.parse(time)) && ms >= 0, 'the line has a time and a duration')
  return rest
}

t.test('an in-process answer: headers set and removed, audit id stamped, one audit line once sent', async (t) => {
  const res = await fetch(`${gateway.base}/public/v1/content`, { headers: { authorization: `Bearer ${token}` } })
  t.equal(res.status, 200)
  t.ok(Array.isArray(((await res.json()) as { data?: unknown }).data), 'the content list answered')
  const id = res.headers.get('x-request-id') ?? ''
  t.same({ frame: res.headers.get('x-frame-options'), audit: res.headers.get('x-audit-id'), powered: res.headers.get('x-powered-by') }, { frame: 'DENY', audit: id, powered: null })
  t.same(await auditLineOf(t, id), { method: 'GET', url: '/public/v1/content', service: 'content', route: 'content_list', client: 'demo-content', status: 200, completed: true })
})

t.test('a refusal of a later step goes through the same hooks', async (t) => {
  const res = await fetch(`${gateway.base}/public/v1/content`)
  t.same({ status: res.status, body: await res.json() }, { status: 401, body: { error: 'Unauthenticated.' } })
  const id = res.headers.get('x-request-id') ?? ''
  t.same({ frame: res.headers.get('x-frame-options'), audit: res.headers.get('x-audit-id') }, { frame: 'DENY', audit: id })
  t.same(await auditLineOf(t, id), { method: 'GET', url: '/public/v1/content', service: 'content', route: 'content_list', client: null, status: 401, completed: true })
})

t.test('a relayed answer: the upstream\'s head is changed before it is written, its body streamed untouched', async (t) => {
  const res = await fetch(`${gateway.base}/legacy/pricing/prices/7`, { headers: { authorization: `Bearer ${token}` } })
  t.same({ status: res.status, body: await res.json() }, { status: 200, body: { url: '/prices/7' } })
  const id = res.headers.get('x-request-id') ?? ''
  t.same({
    frame: res.headers.get('x-frame-options'),
    audit: res.headers.get('x-pricing-audit'),
    powered: res.headers.get('x-powered-by'),
    source: res.headers.get('x-price-source'),
  }, { frame: 'DENY', audit: id, powered: null, source: 'db' })
  t.same(await auditLineOf(t, id), { method: 'GET', url: '/legacy/pricing/prices/7', service: 'pricing', route: 'read', client: 'demo-content', status: 200, completed: true })
})

/** The body copy of `requestId` (base64 decoded; null when none was kept), waited for. */
async function bodyCopyOf (requestId: string): Promise<string | null> {
  const line = await waitFor(async () => {
    const text = await readFile(join(dir, 'bodies.log'), 'utf8').catch(() => '')
    return text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { id: string, body: string | null }).find((l) => l.id === requestId)
  }, { what: `the body copy of ${requestId}`, intervalMs: 50 })
  return line.body === null ? null : Buffer.from(line.body, 'base64').toString()
}

t.test('captureBody: a relayed body is copied as it streams, for the sent hook', async (t) => {
  const res = await fetch(`${gateway.base}/legacy/pricing/prices/9`, { headers: { authorization: `Bearer ${token}` } })
  const body = await res.text()
  t.same({ status: res.status, body }, { status: 200, body: '{"url":"/prices/9"}' })
  t.equal(await bodyCopyOf(res.headers.get('x-request-id') ?? ''), body)
})

t.test('captureBody: a refusal (in-process) is copied too', async (t) => {
  const res = await fetch(`${gateway.base}/legacy/pricing/prices/9`)
  const body = await res.text()
  t.same({ status: res.status, body: JSON.parse(body) }, { status: 401, body: { error: 'Unauthenticated.' } })
  t.equal(await bodyCopyOf(res.headers.get('x-request-id') ?? ''), body)
})

t.test('captureBody: a relayed body over 64 KiB is streamed whole but not kept', async (t) => {
  const res = await fetch(`${gateway.base}/legacy/pricing/big`, { headers: { authorization: `Bearer ${token}` } })
  t.same({ status: res.status, length: (await res.text()).length }, { status: 200, length: 100 * 1024 })
  t.equal(await bodyCopyOf(res.headers.get('x-request-id') ?? ''), null)
})

t.test('no plugin under plugins/ patches writeHead (the response phase replaced it)', async (t) => {
  const found = await promisify(execFile)('grep', ['-rlnw', 'writeHead', repoPath('plugins')]).then((r) => r.stdout, (error: { code?: number, stdout?: string }) => {
    if (error.code === 1) return '' // grep: no match
    throw error
  })
  t.equal(found, '')
})
