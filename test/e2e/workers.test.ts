import { createServer, request as httpRequest, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { letTimePass, until, waitFor } from '../helpers/wait-for.js'
import t from 'tap'
import { validPayload } from '../helpers/fanout-fixture.js'
import { startStubLane, type StubLane } from '../helpers/fanout-lane.js'
import { gatewayFixture } from '../helpers/gateway-fixture.js'
import { spawnGateway, type SpawnedGateway } from '../helpers/spawn-gateway.js'
import { fetchGatewayToken } from '../helpers/fetch-token.js'

/**
 * `server.workers: 2` on a real `lanegate start`: the demo gateway.yaml (SQLite, memory limits) served by a
 * primary and two workers on one port. Every request goes on a connection of its own, so the primary's
 * round-robin spreads them over both workers; the request log lines carry each worker's pid.
 */
interface Answer { status: number, body: string }

/** One request on a fresh connection (no keep-alive agent), so consecutive requests reach different workers. */
function fresh (base: string, path: string, init: { method?: string, token?: string, body?: unknown } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const payload = init.body === undefined ? undefined : JSON.stringify(init.body)
    const req = httpRequest(`${base}${path}`, {
      method: init.method ?? 'GET',
      agent: false,
      headers: {
        ...(init.token === undefined ? {} : { authorization: `Bearer ${init.token}` }),
        ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
      },
    }, (res) => {
      let body = ''
      res.on('data', (d: Buffer) => { body += d.toString() })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
    })
    req.on('error', reject)
    req.end(payload)
  })
}

interface LogLine { pid: number, msg?: string, version?: number, worker_pid?: number, req?: unknown }

function logLines (gateway: SpawnedGateway): LogLine[] {
  return gateway.output().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as LogLine)
}

function listeningPids (gateway: SpawnedGateway): number[] {
  return logLines(gateway).filter((l) => l.msg?.startsWith('Server listening at') === true).map((l) => l.pid)
}

const dir = await mkdtemp(join(tmpdir(), 'lanegate-workers-'))
const lanes = new Map<string, StubLane>()
for (const store of ['org_store_001', 'org_store_002']) lanes.set(store, await startStubLane())
// org_store_900's lane holds its answer until the test releases it: a request in flight while the gateway is told to stop.
const held: ServerResponse[] = []
const slowLane = createServer((_req, res) => { held.push(res) })
function releaseSlowLane (): void {
  for (const res of held.splice(0)) res.writeHead(200, { 'content-type': 'application/json' }).end('{"slow":true}')
}
await new Promise<void>((resolve) => slowLane.listen(0, '127.0.0.1', resolve))
t.teardown(async () => {
  for (const lane of lanes.values()) await lane.close()
  slowLane.closeAllConnections()
  await new Promise((resolve) => slowLane.close(resolve))
  await rm(dir, { recursive: true, force: true })
})

const configFile = join(dir, 'gateway.yaml')
const demo = gatewayFixture()
  .set('server.data_dir', join(dir, 'data'))
  .set('server.shutdown_grace_ms', 5000)
  .set('server.workers', 2)
await writeFile(configFile, demo.text())
const gateway = await spawnGateway({
  config: configFile,
  env: {
    LANE_001_URL: lanes.get('org_store_001')?.url,
    LANE_002_URL: lanes.get('org_store_002')?.url,
    LANE_900_URL: `http://127.0.0.1:${(slowLane.address() as AddressInfo).port}`,
  },
})
t.teardown(async () => {
  if (gateway.child.exitCode === null && gateway.child.signalCode === null) {
    gateway.child.kill('SIGKILL')
    await gateway.exited
  }
})
await waitFor(() => listeningPids(gateway).length === 2, { what: 'two workers listening' })
const primaryPid = gateway.child.pid as number

t.test('two workers serve the port; the payments limit (memory driver) counts once across them', async (t) => {
  t.equal(new Set(listeningPids(gateway)).size, 2, 'two workers listen')
  const jwt = await fetchGatewayToken(gateway.base, 'demo-status')
  const statuses: number[] = []
  for (let i = 0; i < 100; i++) statuses.push((await fresh(gateway.base, '/api/v1/ecommerce/config/processor', { token: jwt })).status)
  t.same(statuses, Array.from({ length: 100 }, () => 200))
  const served = new Set(logLines(gateway).filter((l) => l.req !== undefined).map((l) => l.pid))
  t.same([...served].sort(), [...listeningPids(gateway)].sort(), 'both workers served requests')
  const over = await fresh(gateway.base, '/api/v1/ecommerce/config/processor', { token: jwt })
  const overAgain = await fresh(gateway.base, '/api/v1/ecommerce/config/processor', { token: jwt })
  t.same([over.status, overAgain.status], [429, 429], 'the 101st and 102nd are refused, whichever worker takes them')
})

t.test('a config edit reaches every worker once (only the primary polls the file)', async (t) => {
  const jwt = await fetchGatewayToken(gateway.base, 'demo-content')
  t.equal((await fresh(gateway.base, '/public/v1/content', { token: jwt })).status, 200)
  const edit = async (fixture: typeof demo): Promise<void> => {
    await writeFile(`${configFile}.tmp`, fixture.text())
    await rename(`${configFile}.tmp`, configFile)
  }
  await edit(demo.set('services.content.routes.content_list', [{ scope: { all: ['engage:content.create'] } }]))
  const reloaded = (): LogLine[] => logLines(gateway).filter((l) => l.msg === 'config reloaded')
  t.ok(await until(() => reloaded().length >= 2), 'both workers reloaded')
  const statuses: number[] = []
  for (let i = 0; i < 6; i++) statuses.push((await fresh(gateway.base, '/public/v1/content', { token: jwt })).status)
  t.same(statuses, [403, 403, 403, 403, 403, 403], 'the new policy applies on every worker')
  // "Once" is an absence: the file edited back is the barrier. A worker reloads in the order the edits were seen,
  // so a second reload of the first edit would come before its reload to version 3.
  await edit(demo)
  t.ok(await until(() => reloaded().filter((l) => l.version === 3).length >= 2), 'both workers reloaded the edit back')
  const pids = listeningPids(gateway)
  t.same(reloaded().map((l) => [l.pid, l.version]).sort(), [...pids.map((pid) => [pid, 2]), ...pids.map((pid) => [pid, 3])].sort(), 'each worker reloaded once to version 2, then once to version 3')
  t.equal((await fresh(gateway.base, '/public/v1/content', { token: jwt })).status, 200, 'the edit back applies')
})

t.test('SIGHUP to the primary is passed to the workers; nobody dies of it', async (t) => {
  const before = logLines(gateway).length
  process.kill(primaryPid, 'SIGHUP')
  t.ok(await until(() => logLines(gateway).slice(before).some((l) => l.pid === primaryPid && l.msg === 'config file changed or SIGHUP: every worker reloads')))
  // Nobody dying is an absence, and an unchanged file logs nothing more: a short pause for a death to show.
  await letTimePass(300)
  t.equal(gateway.child.exitCode, null, 'the primary still runs')
  t.equal((await fresh(gateway.base, '/healthz')).status, 200)
})

t.test('100 concurrent commits of one dispatch across both workers on one SQLite file: one 200, each lane applied once', async (t) => {
  const jwt = await fetchGatewayToken(gateway.base, 'demo-exchange')
  const preview = JSON.parse((await fresh(gateway.base, '/v1/fanout/preview', {
    method: 'POST', token: jwt, body: { operation_type: 'price-change', payload: validPayload, store_org_ids: ['org_store_001', 'org_store_002'] },
  })).body) as { dispatch_id: string }
  const id = preview.dispatch_id
  const answers = await Promise.all(Array.from({ length: 100 }, () => fresh(gateway.base, `/v1/fanout/dispatches/${id}/commit`, { method: 'POST', token: jwt })))
  t.same([answers.filter((a) => a.status === 200).length, answers.filter((a) => a.status === 409).length], [1, 99])
  for (const [store, lane] of lanes) t.same([...lane.applied.entries()], [[`${id}:${store}`, 1]], `${store} applied once`)
})

t.test('the token endpoint\'s per-client limit (60 per minute) counts once across both workers', async (t) => {
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: 'demo-checkout', client_secret: 'demo-checkout-secret' }).toString()
  const issue = (): Promise<Answer> => new Promise((resolve, reject) => {
    const req = httpRequest(`${gateway.base}/oauth/token`, { method: 'POST', agent: false, headers: { 'content-type': 'application/x-www-form-urlencoded' } }, (res) => {
      let body = ''
      res.on('data', (d: Buffer) => { body += d.toString() })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
    })
    req.on('error', reject)
    req.end(form)
  })
  const before = logLines(gateway).length
  const statuses: number[] = []
  for (let i = 0; i < 60; i++) statuses.push((await issue()).status)
  t.same(statuses, Array.from({ length: 60 }, () => 200))
  const served = new Set(logLines(gateway).slice(before).filter((l) => l.req !== undefined).map((l) => l.pid))
  t.equal(served.size, 2, 'both workers issued tokens')
  const over = await issue()
  t.equal(over.status, 429, 'the 61st is refused')
  t.equal((JSON.parse(over.body) as { error: string }).error, 'rate_limit_exceeded')
})

t.test('a worker killed with SIGKILL is restarted; the counts, kept by the primary, survive', async (t) => {
  const [victim] = listeningPids(gateway)
  process.kill(victim as number, 'SIGKILL')
  t.ok(await until(() => listeningPids(gateway).length === 3), 'a third worker started listening')
  t.match(logLines(gateway).find((l) => l.msg === 'worker exited; starting a new one'), { pid: primaryPid, worker_pid: victim })
  const jwt = await fetchGatewayToken(gateway.base, 'demo-status')
  const statuses: number[] = []
  for (let i = 0; i < 4; i++) statuses.push((await fresh(gateway.base, '/api/v1/ecommerce/config/processor', { token: jwt })).status)
  t.same(statuses, [429, 429, 429, 429], 'still over the limit counted before the crash, on every worker')
})

t.test('SIGTERM to the primary: every worker finishes its in-flight request, then all exit 0', async (t) => {
  const jwt = await fetchGatewayToken(gateway.base, 'demo-other')
  const inFlight = fresh(gateway.base, '/v1/stores/org_store_900/live/items', { token: jwt })
  await waitFor(() => held.length === 1, { what: 'the request to reach the slow lane' })
  process.kill(primaryPid, 'SIGTERM')
  const workerPids = new Set(listeningPids(gateway))
  const drained = (): number => logLines(gateway).filter((l) => workerPids.has(l.pid) && l.msg === 'shutting down: finishing in-flight requests').length
  await waitFor(() => drained() === 2, { what: 'both workers to start draining' })
  releaseSlowLane()
  const answer = await inFlight
  t.same(answer, { status: 200, body: '{"slow":true}' }, 'the request in flight was answered')
  const code = await gateway.exited
  t.equal(code, 0)
  // Within the grace period: told by what was logged, not by the clock.
  t.notMatch(gateway.output() + gateway.errors(), /grace period over|after the grace period|within the grace period and margin/, 'nobody was cut off at the grace period')
  t.equal(drained(), 2, 'both live workers drained')
  t.ok(logLines(gateway).some((l) => l.pid === primaryPid && l.msg === 'every worker stopped'))
})
