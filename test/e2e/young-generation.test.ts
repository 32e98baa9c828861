import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { MEMORY_REDUCER_FLAG } from '../../src/node-tuning/memory-reducer.js'
import { GATEWAY_NODE_FLAGS } from '../../src/node-tuning/node-flags.js'
import { YOUNG_GENERATION_FLAG } from '../../src/node-tuning/young-generation.js'
import { healthzTraffic } from '../helpers/healthz-traffic.js'
import { npmStart } from '../helpers/npm-start.js'
import { repoPath } from '../helpers/paths.js'
import { spawnPlainNode } from '../helpers/plain-node.js'
import { freePort, spawnGateway } from '../helpers/spawn-gateway.js'
import { gatewayFixture } from '../helpers/gateway-fixture.js'
import { waitFor } from '../helpers/wait-for.js'

/**
 * The young generation's floor (src/node-tuning/young-generation.ts) on real processes. V8 grows the young generation
 * to its maximum while the gateway boots, and shrinks it once the process idles (the memory reducer's GC after boot;
 * later, the first scavenge after any idle spell): to 1–2 MB without the floor, to no less than 8 MB with it. The
 * gateway's full flags also turn the memory reducer off (memory-reducer.ts), which takes away the shrink this test
 * waits for, so the floor is watched on gateways that keep V8's reducer: one with the floor alone, one with nothing;
 * `npm start`'s own launch is checked to carry every flag. Sizes are read from the admin listener's
 * `nodejs_heap_space_size_total_bytes{space="new"}` (prom-client's default metrics).
 */
const MB = 1024 * 1024

async function newSpaceBytes (admin: string): Promise<number> {
  const text = await (await fetch(`${admin}/metrics`)).text()
  const m = /^nodejs_heap_space_size_total_bytes\{space="new"\} (\d+)/m.exec(text)
  if (m === null) throw new Error('no new-space size in the metrics')
  return Number(m[1])
}

/** Some traffic, then idle until the reducer has shrunk the young generation (it read `boot` bytes before). */
async function afterIdleShrink (base: string, admin: string): Promise<number> {
  await healthzTraffic(base, 200)
  const boot = await newSpaceBytes(admin)
  let now = boot
  await waitFor(async () => { now = await newSpaceBytes(admin); return now < boot }, { what: `the young generation to shrink from ${boot / MB} MB once idle`, timeoutMs: 90_000, intervalMs: 1_000 })
  return now
}

function cmdline (pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter((a) => a !== '')
}

t.test('through an idle shrink the floor keeps 8 MB per semi-space, where the same gateway without it drops below', async (t) => {
  const [floorCfg, bareCfg] = await Promise.all([gatewayFixture().write(), gatewayFixture().write()])
  t.teardown(() => Promise.all([floorCfg.remove(), bareCfg.remove()]))
  const [floor, bare] = await Promise.all([
    spawnGateway({ config: floorCfg.file, nodeArgs: [YOUNG_GENERATION_FLAG] }),
    spawnGateway({ config: bareCfg.file, nodeArgs: [] }),
  ])
  t.teardown(() => { floor.child.kill('SIGKILL'); bare.child.kill('SIGKILL') })
  const [withFloor, without] = await Promise.all([afterIdleShrink(floor.base, floor.admin as string), afterIdleShrink(bare.base, bare.admin as string)])
  t.ok(without < 8 * MB, `without the floor the idle young generation shrank to ${without / MB} MB`)
  t.ok(withFloor >= 8 * MB, `with ${YOUNG_GENERATION_FLAG} it shrank to ${withFloor / MB} MB, not below its floor`)
})

t.test('npm start runs the gateway with every one of the gateway\'s node flags', async (t) => {
  const cfg = await gatewayFixture().write()
  t.teardown(() => cfg.remove())
  // `npm start` exactly as a user runs it: the flags come from package.json's script.
  const npm = npmStart(cfg.file, await freePort())
  let gatewayPid: number | undefined
  t.teardown(() => {
    // npm would pass a SIGTERM on; a SIGKILL would leave the gateway it started serving (and this file running).
    if (gatewayPid !== undefined) process.kill(gatewayPid, 'SIGKILL')
    npm.child.kill('SIGKILL')
  })
  const pidFile = join(cfg.dir, 'data', 'lanegate.pid')
  await waitFor(() => /listening at/.test(npm.output()) && existsSync(pidFile), { what: 'npm start\'s gateway listening and its pid file', timeoutMs: 30_000 })
  gatewayPid = Number(readFileSync(pidFile, 'utf8'))
  const argv = cmdline(gatewayPid)
  for (const flag of GATEWAY_NODE_FLAGS) t.ok(argv.includes(flag), `the gateway (pid ${gatewayPid}) runs with ${flag}: ${argv.join(' ')}`)
})

function workerPids (output: string): number[] {
  return output.split('\n').filter((l) => l.startsWith('{') && l.includes('Server listening at')).map((l) => (JSON.parse(l) as { pid: number }).pid)
}

t.test('server.workers: 2, the primary started without the flags: the primary forks every worker with them, the floor unless NODE_OPTIONS sizes the young generation', async (t) => {
  const cfg = await gatewayFixture().set('server.data_dir', './data').set('server.workers', 2).write()
  t.teardown(() => cfg.remove())
  for (const nodeOptions of [undefined, '--max-semi-space-size=32']) {
    // A plain process (tap would rewrite NODE_OPTIONS in a child it sees spawned), as a supervisor starts it.
    const primary = spawnPlainNode([repoPath('bin/lanegate.js'), 'start', '--config', cfg.file, '--port', '0', '--host', '127.0.0.1'], { LANEGATE_LOG_LEVEL: 'info', LANEGATE_ADMIN_PORT: '0', NODE_OPTIONS: nodeOptions }, ['ignore', 'pipe', 'pipe'])
    t.teardown(() => { primary.kill('SIGKILL') })
    let output = ''
    primary.stdout?.on('data', (d: Buffer) => { output += d.toString() })
    primary.stderr?.on('data', (d: Buffer) => { output += d.toString() })
    const exited = new Promise<number | null>((resolve) => primary.on('exit', resolve))
    await waitFor(() => workerPids(output).length === 2, { what: 'two workers listening', timeoutMs: 30_000 })
    const workers = workerPids(output)
    t.notOk(workers.includes(primary.pid as number), 'the listening processes are the workers')
    for (const pid of workers) {
      const argv = cmdline(pid)
      if (nodeOptions === undefined) t.ok(argv.includes(YOUNG_GENERATION_FLAG), `worker ${pid} started with ${YOUNG_GENERATION_FLAG}: ${argv.join(' ')}`)
      else t.notOk(argv.includes(YOUNG_GENERATION_FLAG), `NODE_OPTIONS ${nodeOptions}: worker ${pid} started without ours: ${argv.join(' ')}`)
      t.ok(argv.includes(MEMORY_REDUCER_FLAG), `worker ${pid} started with ${MEMORY_REDUCER_FLAG} either way (NODE_OPTIONS cannot carry it)`)
    }
    const primaryArgv = cmdline(primary.pid as number)
    t.notOk(GATEWAY_NODE_FLAGS.some((flag) => primaryArgv.includes(flag)), 'the primary itself was started without them')
    primary.kill('SIGTERM')
    t.equal(await exited, 0)
  }
})
