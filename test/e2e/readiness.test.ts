import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { createServer, type AddressInfo } from 'node:net'
import t from 'tap'
import pg from 'pg'
import { TcpProxy } from '../helpers/tcp-proxy.js'
import { buildTestApp, type TestApp } from '../helpers/build-app.js'
import { TEST_POSTGRES_URL } from '../helpers/payments-config.js'
import { buildAdminServer, processAdminDeps } from '../../src/observability/admin-server.js'
import { sample } from '../helpers/prometheus.js'
import { waitFor } from '../helpers/wait-for.js'
import { createRequire } from 'node:module'

const parse = createRequire(import.meta.url)('parse-prometheus-text-format') as (text: string) => Parameters<typeof sample>[0]

async function freePort (): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

/** /readyz and the dependency gauge of a booted gateway, through its admin app. */
function probes (gw: TestApp) {
  const admin = buildAdminServer(processAdminDeps(gw.metrics as NonNullable<TestApp['metrics']>, gw.readiness, () => gw.gateway.current().version))
  return {
    admin,
    readyz: async () => {
      const res = await admin.inject({ method: 'GET', url: '/readyz' })
      return { status: res.statusCode, body: res.json() as { status: string, checks: Record<string, string>, failed: string[] } }
    },
    up: async (dependency: string) => sample(parse((await admin.inject({ method: 'GET', url: '/metrics' })).body), 'lanegate_dependency_up', { dependency }),
  }
}

t.test('/readyz answers 503 naming the database while PostgreSQL is unreachable, and 200 once it is back', async (t) => {
  const probe = new pg.Client({ connectionString: TEST_POSTGRES_URL, connectionTimeoutMillis: 2000 })
  try {
    await probe.connect()
  } catch (error) {
    if (process.env.LANEGATE_REQUIRE_SERVICES === '1') throw error
    t.plan(0, `PostgreSQL unreachable at ${TEST_POSTGRES_URL}`)
    return
  }
  const schema = `lg_test_ready_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
  await probe.query(`CREATE SCHEMA ${schema}`)
  t.teardown(async () => {
    await probe.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
    await probe.end()
  })
  const target = new URL(TEST_POSTGRES_URL)
  const proxy = new TcpProxy(await freePort(), { host: target.hostname, port: Number(target.port || 5432) })
  await proxy.open()
  t.teardown(() => proxy.close())
  const url = new URL(TEST_POSTGRES_URL)
  url.host = `127.0.0.1:${proxy.port}`
  url.searchParams.set('options', `-c search_path=${schema}`)

  const gw = await buildTestApp({ logLevel: 'silent', patch: (config) => { config.storage = { driver: 'postgres', sqlite_file: 'x.db', postgres_url: url.toString() } } })
  const { admin, readyz, up } = probes(gw)
  t.teardown(async () => { await admin.close(); await gw.close() })

  t.same(await readyz(), { status: 200, body: { status: 'ready', checks: { config: 'ok', keys: 'ok', database: 'ok' }, failed: [] } })
  t.equal(await up('database'), 1)

  await proxy.close()
  const down = await readyz()
  t.equal(down.status, 503)
  t.same({ status: down.body.status, failed: down.body.failed }, { status: 'not_ready', failed: ['database'] })
  t.match(down.body.checks, { config: 'ok', keys: 'ok', database: /ECONNREFUSED|connect|terminat/ })
  t.equal(await up('database'), 0)

  await proxy.open()
  await waitFor(async () => (await readyz()).status === 200, { what: 'the database check to pass again', intervalMs: 200 })
  t.equal(await up('database'), 1)
  // The gateway's own pool serves queries again, not only the probe.
  await gw.gateway.shared.store.ping()
})

t.test('/readyz answers 503 naming redis while the rate-limit Redis is down, and 200 once it is back', async (t) => {
  const port = await freePort()
  let redis: ChildProcess | undefined
  const startRedis = async (): Promise<void> => {
    const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'ignore'] })
    redis = child
    let out = ''
    await new Promise<void>((resolve, reject) => {
      child.stdout?.on('data', (d: Buffer) => { out += d.toString(); if (out.includes('Ready to accept connections')) resolve() })
      child.on('exit', (code) => reject(new Error(`redis-server exited ${code}: ${out}`)))
    })
  }
  const stopRedis = async (): Promise<void> => {
    if (redis === undefined || redis.exitCode !== null) return
    const exited = once(redis, 'exit')
    redis.kill('SIGKILL')
    await exited
  }
  try {
    await startRedis()
  } catch (error) {
    if (process.env.LANEGATE_REQUIRE_SERVICES === '1') throw error
    t.plan(0, `cannot start redis-server: ${(error as Error).message}`)
    return
  }
  t.teardown(stopRedis)

  const gw = await buildTestApp({
    logLevel: 'silent',
    patch: (config) => { config.rate_limit_store = { driver: 'redis', redis_url: `redis://127.0.0.1:${port}`, key_prefix: 'lg-ready', on_store_error: 'open', sync_interval_ms: 0 } },
  })
  const { admin, readyz, up } = probes(gw)
  t.teardown(async () => { await admin.close(); await gw.close() })

  t.same(await readyz(), { status: 200, body: { status: 'ready', checks: { config: 'ok', keys: 'ok', database: 'ok', redis: 'ok' }, failed: [] } })
  t.equal(await up('redis'), 1)

  await stopRedis()
  await waitFor(async () => (await readyz()).status === 503, { what: 'the redis check to fail', intervalMs: 200 })
  const down = await readyz()
  t.same({ status: down.body.status, failed: down.body.failed }, { status: 'not_ready', failed: ['redis'] })
  t.equal(await up('redis'), 0)

  await startRedis()
  await waitFor(async () => (await readyz()).status === 200, { what: 'the redis check to pass again', intervalMs: 200 })
  t.equal(await up('redis'), 1)
})
