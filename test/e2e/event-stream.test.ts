import { spawn } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import type { ServerResponse } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { spawnGateway, type SpawnedGateway } from '../helpers/spawn-gateway.js'
import { until } from '../helpers/wait-for.js'
import { startBackend, type Backend } from '../helpers/upstream-servers.js'

/**
 * Event streams through a real `lanegate start`, read with `curl -N` (issue 22 item 5): a `text/event-stream`
 * answer reaches the caller event by event (the first before the backend sends the second), and a silent stream
 * is cut after `stream_idle_ms`, not at `body_idle_ms` and not before. `connection-limit` counts an open stream.
 */

const RW_HASH = '$scrypt$ln=15,r=8,p=1$VJNnriFV4HtjoqLcU/KggA$Oy75w3bu2mvI4sOD5uRaI5BRff89ZEbX9nciP5f4w3U'

const config = (backend: Backend, dataDir: string): string => `
server: { data_dir: ${dataDir} }
admin: { port: 0 }
issuer: { issuer: http://localhost:8080 }
scopes:
  pricing:read: { description: Read prices }
organizations:
  - id: org_hq
service_accounts:
  - { client_id: pricing-rw, organization: org_hq, scopes: [pricing:read], secrets: [ { created: "2026-11-01", hash: "${RW_HASH}" } ] }
services:
  feed:
    type: proxy
    prefix: /feed
    envelope: exchange
    upstream: { targets: [ "${backend.url}" ], timeouts: { body_idle_ms: 400, stream_idle_ms: 2500 } }
    policies: [ { auth: {} } ]
    routes:
      events: { methods: [GET], path: "/*", policies: [ { connection-limit: { key: client, max: 1 } } ] }
`

let gateway: SpawnedGateway
let backend: Backend
let token: string
/** The backend's open event streams, by path. */
const streams = new Map<string, ServerResponse>()

interface CurlRun { chunks: Array<{ at: number, text: string }>, exited: Promise<number | null>, kill: () => void }

function curl (path: string): CurlRun {
  const child = spawn('curl', ['-sS', '-N', '-H', `authorization: Bearer ${token}`, `${gateway.base}${path}`], { stdio: ['ignore', 'pipe', 'pipe'] })
  const chunks: CurlRun['chunks'] = []
  child.stdout.on('data', (d: Buffer) => chunks.push({ at: Date.now(), text: d.toString() }))
  return { chunks, exited: new Promise((resolve) => child.on('exit', resolve)), kill: () => child.kill() }
}

t.before(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-sse-'))
  backend = await startBackend(t, 'sse')
  backend.handle((req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
    res.write('data: event 1\n\n')
    streams.set(req.url ?? '', res)
  })
  const file = join(dir, 'gateway.yaml')
  await writeFile(file, config(backend, join(dir, 'data')))
  gateway = await spawnGateway({ config: file })
  t.teardown(async () => {
    gateway.child.kill('SIGTERM')
    await gateway.exited
    await rm(dir, { recursive: true, force: true })
  })
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: 'pricing-rw', client_secret: 'demo-exchange-secret' })
  token = ((await (await fetch(`${gateway.base}/oauth/token`, { method: 'POST', body: form })).json()) as { access_token: string }).access_token
})

t.test('the first event reaches curl -N before the backend sends the second', async (t) => {
  const run = curl('/feed/prices')
  t.ok(await until(() => run.chunks.map((c) => c.text).join('').includes('data: event 1\n\n'), 10_000), 'event 1 arrived')
  t.notOk(run.chunks.map((c) => c.text).join('').includes('event 2'), 'while event 2 is not sent yet')
  streams.get('/prices')!.write('data: event 2\n\n')
  t.ok(await until(() => run.chunks.map((c) => c.text).join('').includes('data: event 2\n\n'), 10_000), 'event 2 follows')

  // connection-limit (max 1) counts the open stream: a second one is refused, and admitted once the first ended.
  const second = await fetch(`${gateway.base}/feed/other`, { headers: { authorization: `Bearer ${token}` } })
  t.same([second.status, await second.json()], [429, { error: 'Too many requests', max_connections: 1 }])
  streams.get('/prices')!.end()
  t.equal(await run.exited, 0, 'the stream ended cleanly')
  let third: Response | undefined
  t.ok(await until(async () => {
    const res = await fetch(`${gateway.base}/feed/third`, { headers: { authorization: `Bearer ${token}` } })
    if (res.status === 200) third = res
    else await res.body?.cancel()
    return res.status === 200
  }, 5000), `a new stream is admitted once the first ended (${third?.status})`)
  // Read to its end, so the gateway writes it whole: a caller cancelling while the backend ends it was a race over
  // whether the answer counts (fastify counts an answer written whole, not one its caller left).
  streams.get('/third')?.end()
  t.equal(await third?.text(), 'data: event 1\n\n', 'the third stream read to its end')
})

t.test('a silent event stream is cut after stream_idle_ms, not at body_idle_ms and not before', async (t) => {
  const run = curl('/feed/silent')
  t.ok(await until(() => run.chunks.length > 0, 10_000), 'event 1 arrived')
  const firstAt = run.chunks[0]!.at
  const code = await run.exited
  const cutAfter = Date.now() - firstAt
  t.equal(code, 18, 'curl saw a cut transfer (18: partial file), never a complete-looking end')
  t.ok(cutAfter >= 2400, `not before stream_idle_ms (cut after ${cutAfter} ms; body_idle_ms is 400)`)
  // Only "cut" against "never cut" (a stream that is never cut keeps curl waiting): 10 × stream_idle_ms.
  t.ok(cutAfter < 10 * 2500, `cut within 10 × stream_idle_ms (${cutAfter} ms)`)
  streams.get('/silent')?.end()
})

t.test('event streams are timed apart from request latency: the 429 in request latency, the stream in its own histogram', async (t) => {
  const metric = (text: string, name: string): number => {
    const line = text.split('\n').find((l) => l.startsWith(`${name}{service="feed",route="events"}`))
    return line === undefined ? 0 : Number(line.split(' ').at(-1))
  }
  // /prices and /third were read to their ends (fastify reports an answer once written whole; the stream cut is not).
  const text = await (await fetch(`${gateway.admin as string}/metrics`)).text()
  t.same({
    stream: metric(text, 'lanegate_http_stream_duration_seconds_count'),
    request: metric(text, 'lanegate_http_request_duration_seconds_count'),
  }, { stream: 2, request: 1 }, 'the streams /prices and /third as streams; only the 429 (a refusal, not a stream) in request latency')
  const answered = text.split('\n').filter((l) => l.startsWith('lanegate_http_requests_total{service="feed",route="events"')).reduce((n, l) => n + Number(l.split(' ').at(-1)), 0)
  t.equal(answered, 3, 'every answer counted once')
})
