import { mkdtemp, rm } from 'node:fs/promises'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { spawnGateway, type SpawnedGateway } from '../helpers/spawn-gateway.js'
import { waitFor } from '../helpers/wait-for.js'

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/

let gw: SpawnedGateway
let seen: IncomingHttpHeaders[]
let token: string

t.before(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-trace-'))
  seen = []
  const lane = createServer((req, res) => {
    seen.push(req.headers)
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}')
  })
  await new Promise<void>((resolve) => lane.listen(0, '127.0.0.1', resolve))
  // At debug a request writes "incoming request" as well as "request completed": both must carry the trace id.
  gw = await spawnGateway({ env: { LANEGATE_DATA_DIR: dir, LANEGATE_LOG_LEVEL: 'debug', LANE_001_URL: `http://127.0.0.1:${(lane.address() as AddressInfo).port}` } })
  t.teardown(async () => {
    gw.child.kill('SIGTERM')
    await gw.exited
    lane.closeAllConnections()
    await new Promise<void>((resolve) => lane.close(() => resolve()))
    await rm(dir, { recursive: true, force: true })
  })
  const res = await fetch(`${gw.base}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=client_credentials&client_id=demo-exchange&client_secret=demo-exchange-secret',
  })
  token = (await res.json() as { access_token: string }).access_token
})

/** Every log line of one request (by its request id), parsed. */
function linesOf (requestId: string): Record<string, unknown>[] {
  return gw.output().split('\n').filter((l) => l.includes(`"reqId":"${requestId}"`)).map((l) => JSON.parse(l) as Record<string, unknown>)
}

async function relay (headers: Record<string, string>): Promise<{ requestId: string, lane: IncomingHttpHeaders }> {
  const before = seen.length
  const res = await fetch(`${gw.base}/v1/stores/org_store_001/live/items`, { headers: { authorization: `Bearer ${token}`, ...headers } })
  if (res.status !== 200) throw new Error(`relay answered ${res.status}`)
  await res.text()
  const requestId = res.headers.get('x-request-id') as string
  // "request completed" is written after the answer: wait for it to reach the pipe.
  await waitFor(() => linesOf(requestId).some((l) => l.msg === 'request completed'), { what: `the "request completed" line of ${requestId}` })
  return { requestId, lane: seen[before] as IncomingHttpHeaders }
}

t.test('a valid traceparent reaches the lane with its trace id and the gateway as parent; tracestate follows', async (t) => {
  const { requestId, lane } = await relay({ traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', tracestate: 'vendor=abc' })
  const sent = TRACEPARENT.exec(String(lane.traceparent))
  t.ok(sent, `the lane got a valid traceparent (${lane.traceparent})`)
  t.equal(sent?.[1], '4bf92f3577b34da6a3ce929d0e0e4736', 'same trace id')
  t.not(sent?.[2], '00f067aa0ba902b7', 'the gateway\'s own span is the parent')
  t.equal(sent?.[3], '01', 'flags kept')
  t.equal(lane.tracestate, 'vendor=abc')
  const lines = linesOf(requestId)
  t.ok(lines.length >= 2, `${lines.length} log lines for the request`)
  for (const line of lines) t.equal(line.trace_id, '4bf92f3577b34da6a3ce929d0e0e4736', `"${String(line.msg)}" carries the trace id`)
})

t.test('without a traceparent (or with an invalid one) the gateway starts a trace and logs its id', async (t) => {
  for (const given of [undefined, '00-00000000000000000000000000000000-00f067aa0ba902b7-01', 'garbage', '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01']) {
    const { requestId, lane } = await relay(given === undefined ? {} : { traceparent: given, tracestate: 'vendor=abc' })
    const sent = TRACEPARENT.exec(String(lane.traceparent))
    t.ok(sent, `a new valid traceparent for ${given}`)
    t.not(sent?.[1], '00000000000000000000000000000000')
    t.not(sent?.[1], '4bf92f3577b34da6a3ce929d0e0e4736')
    t.equal(lane.tracestate, undefined, 'no tracestate without a valid traceparent')
    const lines = linesOf(requestId)
    t.ok(lines.length >= 2)
    for (const line of lines) t.equal(line.trace_id, sent?.[1], `"${String(line.msg)}" carries the new trace id`)
  }
})
