import { spawn, type ChildProcess } from 'node:child_process'
import { mkdir, readFile } from 'node:fs/promises'
import { hostname } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { openConfigStore, type ConfigStore } from '../src/config-store/config-store.js'
import { REPO_ROOT } from './paths.js'
import type { ConfigPushMeasurement, ScenarioResult } from './result-types.js'
import type { RunLog } from './run-scenario.js'
import { quantileSorted } from './stats.js'

/** The PostgreSQL server the scenario creates its own database on (dropped at the end). */
const POSTGRES_URL = process.env.LANEGATE_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const INSTANCES = 3
const PUSHES = 20
const READ = 'processor_config: [ { scope: { all: [commerce:payment-intents.read] } } ]'
const CREATE = 'processor_config: [ { scope: { all: [commerce:payment-intents.create] } } ]'

/**
 * `config-push`: three `lanegate start --config-store` processes follow a database of their own; 20 pushes
 * alternate a scope on a route, and each instance's push-to-applied time (the version's time in the store to the
 * time the instance reports it applied, from the instances table) gives p50 and max per instance and overall.
 * Not pinned: the instances are whole processes beside each other, as on a host of a fleet.
 */
export async function runConfigPush (workDir: string, log: RunLog): Promise<ScenarioResult> {
  const database = `lg_bench_cfg_${process.pid}_${Date.now().toString(36)}`
  await adminQuery(`CREATE DATABASE ${database}`)
  const url = new URL(POSTGRES_URL)
  url.pathname = `/${database}`
  const children: ChildProcess[] = []
  let store: ConfigStore | undefined
  try {
    store = await openConfigStore(url.toString())
    // Relative paths in a stored config resolve against each instance's working directory: the content folder is the repository's.
    const text = (await readFile(join(REPO_ROOT, 'gateway.yaml'), 'utf8')).replace('source_dir: ./content', `source_dir: ${join(REPO_ROOT, 'content')}`)
    if (!text.includes(READ)) throw new Error('gateway.yaml no longer has the processor_config route this scenario changes')
    await store.push({ text, message: 'bench: start', author: 'bench' })
    for (let i = 0; i < INSTANCES; i++) children.push(await startInstance(url.toString(), join(workDir, `instance-${i}`)))
    const ids = children.map((c) => `${hostname()}:${c.pid}`)
    await appliedBy(store, ids, 1)
    const delays = new Map<string, number[]>(ids.map((id) => [id, []]))
    for (let push = 1; push <= PUSHES; push++) {
      const pushed = await store.push({ text: push % 2 === 1 ? text.replace(READ, CREATE) : text, message: `bench: push ${push}`, author: 'bench' })
      for (const [id, at] of await appliedBy(store, ids, pushed.version)) delays.get(id)?.push(at - pushed.createdAt)
    }
    const measurement: ConfigPushMeasurement = {
      pushes: PUSHES,
      instances: ids.map((id) => ({ instance: id, ...p50Max(delays.get(id) ?? []) })),
      overall: p50Max([...delays.values()].flat()),
    }
    log.progress(`config-push: p50 ${measurement.overall.p50Ms} ms, max ${measurement.overall.maxMs} ms over ${INSTANCES} instances`)
    return { id: 'config-push', title: `push to applied over ${INSTANCES} instances following the config store`, kind: 'config-push', connections: 0, variants: [], runs: [], skipped: [], configPush: measurement }
  } finally {
    for (const child of children) child.kill('SIGTERM')
    await Promise.all(children.map((c) => c.exitCode === null ? new Promise((resolve) => c.once('exit', resolve)) : undefined))
    await store?.close()
    await adminQuery(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)
  }
}

function p50Max (values: number[]): { p50Ms: number, maxMs: number } {
  const sorted = [...values].sort((a, b) => a - b)
  return { p50Ms: quantileSorted(sorted, 0.5), maxMs: sorted[sorted.length - 1] ?? Number.NaN }
}

async function adminQuery (sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_URL })
  await client.connect()
  try {
    await client.query(sql)
  } finally {
    await client.end()
  }
}

/** One follower in `cwd` (its data dir and saved copy), resolved once it listens. */
async function startInstance (storeUrl: string, cwd: string): Promise<ChildProcess> {
  await mkdir(cwd, { recursive: true })
  const child = spawn(process.execPath, [join(REPO_ROOT, 'bin/lanegate.js'), 'start', '--port', '0', '--host', '127.0.0.1', '--config-store', storeUrl], {
    cwd,
    env: { ...process.env, LANEGATE_ADMIN_PORT: '0', LANEGATE_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  let errors = ''
  child.stderr?.on('data', (d: Buffer) => { errors += d.toString() })
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (d: Buffer) => {
      output += d.toString()
      if (/listening at http/.test(output)) resolve()
    })
    child.once('exit', (code) => reject(new Error(`a config-store follower exited ${code} before listening: ${errors.slice(-400)}${output.slice(-400)}`)))
  })
  child.stdout?.resume()
  child.stderr?.resume()
  return child
}

/** Waits (at most 60 s) until every instance reports `version`; resolves with when each applied it. */
async function appliedBy (store: ConfigStore, ids: readonly string[], version: number): Promise<Map<string, number>> {
  const end = Date.now() + 60_000
  for (;;) {
    const rows = await store.instances()
    const at = new Map(rows.filter((r) => ids.includes(r.instanceId) && r.applied?.version === version).map((r) => [r.instanceId, r.applied?.at ?? 0]))
    if (at.size === ids.length) return at
    if (Date.now() > end) throw new Error(`version ${version} not applied by every instance within 60 s`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
