import { createServer, type ServerResponse } from 'node:http'
import { createServer as createTcpServer } from 'node:net'
import type { AddressInfo } from 'node:net'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { freshRequest } from '../helpers/fresh-request.js'
import { gatewayFixture } from '../helpers/gateway-fixture.js'
import { histogramCount, sample, scrape, scrapeText } from '../helpers/prometheus.js'
import { spawnGateway, startGatewayProcess, type SpawnedGateway } from '../helpers/spawn-gateway.js'
import { fetchGatewayToken } from '../helpers/fetch-token.js'
import { until, waitFor } from '../helpers/wait-for.js'

/**
 * `server.workers: 2` on a real `lanegate start`: the primary alone serves the admin listener; /metrics is the
 * sum over the workers (whichever worker served which request), /readyz asks every worker.
 */
interface LogLine { pid: number, msg?: string, req?: unknown }

function logLines (gateway: SpawnedGateway): LogLine[] {
  return gateway.output().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as LogLine)
}

function listeningPids (gateway: SpawnedGateway): number[] {
  return logLines(gateway).filter((l) => l.msg?.startsWith('Server listening at') === true).map((l) => l.pid)
}

interface ReadyBody {
  status: string
  checks: Record<string, string>
  failed: string[]
  workers: { worker: number, pid: number, status: string, checks: Record<string, string>, failed: string[] }[]
}

async function readyz (admin: string): Promise<{ status: number, body: ReadyBody }> {
  const res = await fetch(`${admin}/readyz`)
  return { status: res.status, body: await res.json() as ReadyBody }
}

/** The ready body of a primary whose workers `ids` are all up (their pids as the body gives them). */
function readyBody (body: ReadyBody, ids: number[]): ReadyBody {
  const ok = { config: 'ok', keys: 'ok', database: 'ok' }
  return {
    status: 'ready',
    checks: { ...ok, workers: 'ok' },
    failed: [],
    workers: ids.map((id) => ({ worker: id, pid: body.workers.find((w) => w.worker === id)?.pid ?? -1, status: 'ready', checks: ok, failed: [] })),
  }
}

const PROCESSOR = { service: 'payments', route: 'processor_config', method: 'GET', status: '200' }

const dir = await mkdtemp(join(tmpdir(), 'lanegate-workers-admin-'))
// org_store_900's lane holds its answer until the test releases it: a request in flight while the gateway drains.
const held: ServerResponse[] = []
const slowLane = createServer((_req, res) => { held.push(res) })
function releaseSlowLane (): void {
  for (const res of held.splice(0)) res.writeHead(200, { 'content-type': 'application/json' }).end('{"slow":true}')
}
await new Promise<void>((resolve) => slowLane.listen(0, '127.0.0.1', resolve))
t.teardown(async () => {
  slowLane.closeAllConnections()
  await new Promise((resolve) => slowLane.close(resolve))
  await rm(dir, { recursive: true, force: true })
})
const configFile = join(dir, 'gateway.yaml')
await writeFile(configFile, gatewayFixture()
  .set('server.data_dir', join(dir, 'data'))
  .set('server.shutdown_grace_ms', 5000)
  .set('server.workers', 2)
  .text())
const gateway = await spawnGateway({
  config: configFile,
  env: { LANE_900_URL: `http://127.0.0.1:${(slowLane.address() as AddressInfo).port}` },
})
t.teardown(async () => {
  if (gateway.child.exitCode === null && gateway.child.signalCode === null) {
    gateway.child.kill('SIGKILL')
    await gateway.exited
  }
})
const admin = gateway.admin as string
const primaryPid = gateway.child.pid as number
await waitFor(() => listeningPids(gateway).length === 2, { what: 'two workers listening' })

t.test('only the primary opens the admin listener; /healthz is its liveness with the serving workers', async (t) => {
  t.same(logLines(gateway).filter((l) => l.msg?.startsWith('Admin listening on') === true).map((l) => l.pid), [primaryPid])
  const res = await fetch(`${admin}/healthz`)
  t.same([res.status, await res.json()], [200, { status: 'ok', workers: 2 }])
})

t.test('/readyz asks both workers: 200 with each worker\'s report', async (t) => {
  const { status, body } = await readyz(admin)
  t.same({ status, body }, { status: 200, body: readyBody(body, [1, 2]) })
  t.same(body.workers.map((w) => w.pid).sort(), listeningPids(gateway).sort(), 'the pids of the two listening workers')
})

t.test('N requests over both workers: one scrape of the primary reports N, one series per label set', async (t) => {
  const jwt = await fetchGatewayToken(gateway.base, 'demo-status')
  const before = logLines(gateway).length
  const statuses: number[] = []
  for (let i = 0; i < 30; i++) statuses.push((await freshRequest(gateway.base, '/api/v1/ecommerce/config/processor', { token: jwt })).status)
  t.same(statuses, Array.from({ length: 30 }, () => 200))
  const served = new Set(logLines(gateway).slice(before).filter((l) => l.req !== undefined).map((l) => l.pid))
  t.equal(served.size, 2, 'both workers served some of them')

  const text = await scrapeText(admin)
  const families = await scrape(admin)
  t.equal(sample(families, 'lanegate_http_requests_total', PROCESSOR), 30, 'the sum over the workers')
  t.equal(histogramCount(text, 'lanegate_http_request_duration_seconds', { service: 'payments', route: 'processor_config' }), 30)
  t.equal(sample(families, 'lanegate_tokens_issued_total', { client_id: 'demo-status' }), 1)
  t.equal(sample(families, 'lanegate_config_version'), 1)
  t.equal(sample(families, 'lanegate_dependency_up', { dependency: 'database' }), 1)
  t.same(['configured', 'serving', 'answered'].map((state) => sample(families, 'lanegate_workers', { state })), [2, 2, 2])
  // The workers' counters and the primary's own merge into one unlabelled series (nothing was dropped here).
  t.same(families.filter((f) => f.name === 'lanegate_log_lines_dropped_total').map((f) => [f.type, f.metrics.length, sample(families, f.name)]), [['COUNTER', 1, 0]])
  t.equal(sample(families, 'process_max_fds', {}) > 0 && sample(families, 'process_max_fds', { process: 'primary' }) > 0, true, 'the workers\' limit and the primary\'s own')

  const samples = text.split('\n').filter((l) => l !== '' && !l.startsWith('#')).map((l) => l.slice(0, l.lastIndexOf(' ')))
  t.same(samples.filter((s, i) => samples.indexOf(s) !== i), [], 'no series twice')
  const types = text.split('\n').filter((l) => l.startsWith('# TYPE ')).map((l) => l.split(' ')[2])
  t.same(types.filter((s, i) => types.indexOf(s) !== i), [], 'no family twice')
})

t.test('a worker that does not answer (SIGSTOP): /metrics answers with its last counts, /readyz 503 naming it', async (t) => {
  const [stopped] = listeningPids(gateway)
  process.kill(stopped as number, 'SIGSTOP')
  t.teardown(() => { process.kill(stopped as number, 'SIGCONT') })
  const started = Date.now()
  const families = await scrape(admin)
  // A scrape that waited on the stopped worker would never end (it stays stopped until the teardown): the bound
  // is 10 × the 3 s answer timeout, enough for a loaded machine, and still tells "gave up" from "stuck".
  t.ok(Date.now() - started < 30_000, 'the scrape gave up on the silent worker (3 s answer timeout)')
  t.equal(sample(families, 'lanegate_http_requests_total', PROCESSOR), 30, 'the silent worker counted with its last answer')
  t.same(['configured', 'serving', 'answered'].map((state) => sample(families, 'lanegate_workers', { state })), [2, 2, 1])
  const { status, body } = await readyz(admin)
  const silent = body.workers.find((w) => w.pid === stopped)
  const other = body.workers.find((w) => w.pid !== stopped)
  const ok = { config: 'ok', keys: 'ok', database: 'ok' }
  t.same({ status, body }, {
    status: 503,
    body: {
      status: 'not_ready',
      checks: { ...ok, workers: `worker ${silent?.worker} (pid ${stopped}): no answer within 1500 ms` },
      failed: ['workers'],
      workers: [
        { worker: silent?.worker, pid: stopped, status: 'not_ready', checks: { worker: 'no answer within 1500 ms' }, failed: ['worker'] },
        { worker: other?.worker, pid: other?.pid, status: 'ready', checks: ok, failed: [] },
      ].sort((a, b) => (a.worker ?? 0) - (b.worker ?? 0)),
    },
  })
  process.kill(stopped as number, 'SIGCONT')
  t.ok(await until(async () => (await readyz(admin)).status === 200), '/readyz back to 200 once it answers again')
})

t.test('a worker killed with SIGKILL: /metrics still answers and keeps its counts; /readyz is 503 until its replacement serves', async (t) => {
  const [victim] = listeningPids(gateway)
  process.kill(victim as number, 'SIGKILL')
  const during = await scrape(admin)
  t.equal(sample(during, 'lanegate_http_requests_total', PROCESSOR), 30, 'the dead worker\'s last scraped counts are kept')
  const notReady = await readyz(admin)
  t.equal(notReady.status, 503)
  t.same(notReady.body.failed, ['workers'])
  t.match(notReady.body.checks.workers, /^(worker \d+ \(pid \d+\): (exited|starting)|1 of 2 workers not running)$/)

  t.ok(await until(() => listeningPids(gateway).length === 3), 'a third worker started listening')
  t.ok(await until(async () => (await readyz(admin)).status === 200), '/readyz back to 200')
  const { status, body } = await readyz(admin)
  const ids = body.workers.map((w) => w.worker)
  t.same({ status, body }, { status: 200, body: readyBody(body, ids) })
  t.equal(ids.length, 2)
  t.ok(ids.includes(3), 'the replacement is worker 3')

  const jwt = await fetchGatewayToken(gateway.base, 'demo-status')
  for (let i = 0; i < 10; i++) t.equal((await freshRequest(gateway.base, '/api/v1/ecommerce/config/processor', { token: jwt })).status, 200)
  const after = await scrape(admin)
  t.equal(sample(after, 'lanegate_http_requests_total', PROCESSOR), 40, 'kept counts plus the new ones, whichever worker served them')
  t.same(['configured', 'serving', 'answered'].map((state) => sample(after, 'lanegate_workers', { state })), [2, 2, 2])
})

t.test('the admin port already taken: the primary stops the start with one line before forking a worker', async (t) => {
  const busy = createTcpServer()
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => busy.close(() => resolve())))
  const busyPort = (busy.address() as AddressInfo).port
  const started = startGatewayProcess({ config: configFile, env: { LANEGATE_ADMIN_PORT: String(busyPort) } })
  t.equal(await started.exited, 1)
  t.equal(started.errors(), `cannot start: listen EADDRINUSE: address already in use 127.0.0.1:${busyPort}\n`)
  t.notMatch(started.output(), /primary starting workers|Server listening/, 'no worker was forked')
})

t.test('SIGTERM to the primary: /readyz 503 (draining) during the drain, /healthz 200, the in-flight request answered', async (t) => {
  const jwt = await fetchGatewayToken(gateway.base, 'demo-other')
  const inFlight = freshRequest(gateway.base, '/v1/stores/org_store_900/live/items', { token: jwt })
  await waitFor(() => held.length === 1, { what: 'the request to reach the slow lane' })
  process.kill(primaryPid, 'SIGTERM')
  const { status, body } = await waitFor(async () => {
    const answer = await readyz(admin)
    return answer.body.checks.draining === undefined ? undefined : answer
  }, { what: '/readyz to report the drain' })
  t.equal(status, 503)
  t.equal(body.status, 'not_ready')
  t.equal(body.checks.draining, 'shutting down: finishing in-flight requests')
  t.ok(body.failed.includes('draining'), 'draining is among the failed checks')
  const live = await fetch(`${admin}/healthz`)
  t.equal(live.status, 200, 'liveness stays 200 during the drain')
  releaseSlowLane()
  t.same(await inFlight, { status: 200, body: '{"slow":true}' })
  t.equal(await gateway.exited, 0)
})
