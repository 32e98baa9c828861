import { spawn } from 'node:child_process'
import { request as httpRequest } from 'node:http'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { gatewayFixture } from '../helpers/gateway-fixture.js'
import { repoPath } from '../helpers/paths.js'
import { freePort, spawnGateway } from '../helpers/spawn-gateway.js'
import { until } from '../helpers/wait-for.js'

/**
 * `server.workers: 2` with the memory driver and `rate_limit_store.sync_interval_ms: 50`: each worker pre-counts
 * its route limits and syncs with the primary every 50 ms (limits/ipc-window-store.ts), on a real `lanegate
 * start`. The bound of docs/performance.md: never more than N × points in a window, and once synced every worker
 * refuses.
 */
const dir = await mkdtemp(join(tmpdir(), 'lanegate-workers-precount-'))
t.teardown(() => rm(dir, { recursive: true, force: true }))

async function demoConfig (workers: number, syncMs: number): Promise<string> {
  const text = gatewayFixture()
    .set('server.data_dir', join(dir, `data-${workers}-${syncMs}`))
    .set('server.workers', workers)
    .set('rate_limit_store.sync_interval_ms', syncMs)
    .set('rate_limits.payments-per-ip.points', 40)
    .text()
  const file = join(dir, `gateway-${workers}-${syncMs}.yaml`)
  await writeFile(file, text)
  return file
}

/** One request on a fresh connection (the primary's round-robin spreads those over the workers): its status. */
function fresh (base: string, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}${path}`, { agent: false }, (res) => { res.resume(); res.on('end', () => resolve(res.statusCode ?? 0)) })
    req.on('error', reject)
    req.end()
  })
}

t.test('two pre-counting workers: the payments limit (40) admits between 40 and N × 40, then both refuse once synced', async (t) => {
  const gateway = await spawnGateway({ config: await demoConfig(2, 50) })
  t.teardown(async () => { gateway.child.kill('SIGTERM'); await gateway.exited })
  t.ok(await until(() => (gateway.output().match(/Server listening at/g) ?? []).length === 2, 20_000), 'both workers listen')
  // The payments chain counts first (rate-limit), then refuses the missing token: 401 = admitted, 429 = refused.
  const path = '/api/v1/ecommerce/payment-intents/pi_missing'
  const statuses: number[] = []
  for (let i = 0; i < 15; i++) statuses.push(...await Promise.all(Array.from({ length: 8 }, () => fresh(gateway.base, path))))
  const admitted = statuses.filter((s) => s === 401).length
  t.same(statuses.filter((s) => s !== 401 && s !== 429), [], 'only 401 and 429')
  t.ok(admitted >= 40, `admitted ${admitted} ≥ points`)
  t.ok(admitted <= 80, `admitted ${admitted} ≤ N × points = 80`)
  // Once a sync carried the primary's count to both (a few 50 ms intervals), every worker refuses: asked until
  // ten fresh connections in a row are refused.
  let after: number[] = []
  await until(async () => (after = await Promise.all(Array.from({ length: 10 }, () => fresh(gateway.base, path)))).every((s) => s === 429))
  t.same(after, Array(10).fill(429), 'every worker refuses once synced')
})

t.test('two exact workers (sync_interval_ms: 0) admit exactly the points', async (t) => {
  const gateway = await spawnGateway({ config: await demoConfig(2, 0) })
  t.teardown(async () => { gateway.child.kill('SIGTERM'); await gateway.exited })
  const path = '/api/v1/ecommerce/payment-intents/pi_missing'
  const statuses: number[] = []
  for (let i = 0; i < 8; i++) statuses.push(...await Promise.all(Array.from({ length: 8 }, () => fresh(gateway.base, path))))
  t.equal(statuses.filter((s) => s === 401).length, 40)
  t.equal(statuses.filter((s) => s === 429).length, 24)
})

// pm2's cluster mode forks `lanegate start` with node:cluster: cluster.isWorker is true there, but no lanegate
// primary exists. Before the environment marker such a process opened no admin listener, watched no file and
// counted its limits over an IPC channel nobody answered.
t.test('a node:cluster worker forked by another manager (pm2-like) runs as a whole gateway of its own', async (t) => {
  const config = await demoConfig(2, 0)
  const port = await freePort()
  const manager = join(dir, 'manager.mjs')
  await writeFile(manager, `import cluster from 'node:cluster'
cluster.setupPrimary({ exec: ${JSON.stringify(repoPath('bin/lanegate.js'))}, args: ['start', '--config', ${JSON.stringify(config)}, '--port', '${port}', '--host', '127.0.0.1'] })
const worker = cluster.fork({ LANEGATE_ADMIN_PORT: '0', LANEGATE_LOG_LEVEL: 'info' })
process.on('SIGTERM', () => { worker.process.kill('SIGTERM'); worker.on('exit', () => process.exit(0)) })
`)
  const child = spawn(process.execPath, [manager], { stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (d: Buffer) => { output += d.toString() })
  child.stderr.on('data', (d: Buffer) => { output += d.toString() })
  t.teardown(() => { child.kill('SIGKILL') })
  t.ok(await until(() => /Admin listening on http/.test(output) && /Server listening at/.test(output), 20_000), `its own admin listener and public listener: ${output.slice(-400)}`)
  t.match(output, /server\.workers \(2\) is ignored: this process was forked by another cluster manager/)
  const statuses: number[] = []
  for (let i = 0; i < 45; i++) statuses.push(await fresh(`http://127.0.0.1:${port}`, '/api/v1/ecommerce/payment-intents/pi_missing'))
  t.same([statuses.filter((s) => s === 401).length, statuses.filter((s) => s === 429).length], [40, 5], 'its limits counted in-process (no primary to ask)')
})
