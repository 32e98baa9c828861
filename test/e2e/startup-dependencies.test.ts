import { connect, createServer, type Server, type Socket } from 'node:net'
import pg from 'pg'
import t, { type Test } from 'tap'
import { TEST_POSTGRES_URL } from '../helpers/payments-config.js'
import { freePort, startGatewayProcess } from '../helpers/spawn-gateway.js'
import { gatewayFixture, type GatewayFixture } from '../helpers/gateway-fixture.js'
import { exitWithin, until } from '../helpers/wait-for.js'

/** The shipped config with a start-up timeout and the given storage / rate-limit store sections. */
function withDependencies (options: { startupTimeoutMs: number, postgresUrl?: string, redisUrl?: string }): GatewayFixture {
  let fixture = gatewayFixture().set('server.data_dir', './data').set('server.startup_timeout_ms', options.startupTimeoutMs)
  if (options.postgresUrl !== undefined) fixture = fixture.set('storage', { driver: 'postgres', postgres_url: options.postgresUrl })
  if (options.redisUrl !== undefined) fixture = fixture.set('rate_limit_store.driver', 'redis').set('rate_limit_store.redis_url', options.redisUrl)
  return fixture
}

/** A TCP proxy on `port` to the shared PostgreSQL: the "database that comes up late". Closing it never touches the server. */
function startProxy (port: number, target: URL): Promise<{ close (): Promise<void> }> {
  const sockets = new Set<Socket>()
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname)
    sockets.add(client).add(upstream)
    client.pipe(upstream).pipe(client)
    const end = (): void => { client.destroy(); upstream.destroy() }
    client.on('error', end).on('close', end)
    upstream.on('error', end).on('close', end)
  })
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, '127.0.0.1', () => resolve({
      close: () => new Promise<void>((done) => { for (const s of sockets) s.destroy(); server.close(() => done()) }),
    }))
  })
}

/**
 * Starts a gateway whose dependency listens nowhere and checks that it exits 1 within startup_timeout_ms (plus a
 * margin for loading modules and the config on a loaded 2-core machine) with one stderr line; returns that line.
 */
async function failedStartLine (t: Test, dependencies: Parameters<typeof withDependencies>[0]): Promise<string> {
  const cfg = await withDependencies(dependencies).write()
  t.teardown(() => cfg.remove())
  const started = Date.now()
  const gw = startGatewayProcess({ config: cfg.file })
  t.teardown(() => { gw.child.kill('SIGKILL') })
  // A gateway that kept retrying would never exit: 10 × the timeout, plus a minute for booting on a loaded machine
  // (1 s of CPU took 10–20 s beside stress-ng), tells the two apart without timing the machine.
  const code = await exitWithin(gw.exited, dependencies.startupTimeoutMs * 10 + 60_000)
  t.equal(code, 1, `exited 1 after ${Date.now() - started} ms`)
  const lines = gw.errors().trim().split('\n')
  t.equal(lines.length, 1, `one line on stderr: ${gw.errors()}`)
  return gw.errors()
}

t.test('Redis on a closed port: exit 1 within startup_timeout_ms + margin, one line naming Redis and its address', async (t) => {
  const closed = await freePort()
  const line = await failedStartLine(t, { startupTimeoutMs: 1500, redisUrl: `redis://127.0.0.1:${closed}` })
  t.match(line, new RegExp(`^cannot start: the rate-limit Redis \\(rate_limit_store\\.redis_url\\) at 127\\.0\\.0\\.1:${closed} not reachable within server\\.startup_timeout_ms \\(1500 ms\\)`))
})

t.test('PostgreSQL on a closed port: exit 1 within startup_timeout_ms + margin, one line naming PostgreSQL', async (t) => {
  const closed = await freePort()
  const line = await failedStartLine(t, { startupTimeoutMs: 1500, postgresUrl: `postgres://postgres:not-logged@127.0.0.1:${closed}/test` })
  t.match(line, new RegExp(`^cannot start: PostgreSQL \\(storage\\.postgres_url\\) at 127\\.0\\.0\\.1:${closed} not reachable within server\\.startup_timeout_ms \\(1500 ms\\): .*ECONNREFUSED`))
  t.notMatch(line, /not-logged/, 'the password in the URL is not printed')
})

t.test('PostgreSQL that comes up after the gateway: the gateway retries and starts serving', async (t) => {
  const target = new URL(TEST_POSTGRES_URL)
  const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL, connectionTimeoutMillis: 2000 })
  try {
    await admin.connect()
  } catch (error) {
    if (process.env.LANEGATE_REQUIRE_SERVICES === '1') throw error
    await t.test('late PostgreSQL', { skip: `PostgreSQL unreachable at ${TEST_POSTGRES_URL} (set LANEGATE_REQUIRE_SERVICES=1 to fail instead)` }, async () => {})
    return
  }
  // The gateway's tables go into a schema of this test's own, dropped afterwards.
  const schema = `lg_test_late_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
  await admin.query(`CREATE SCHEMA ${schema}`)
  t.teardown(async () => {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
    await admin.end()
  })
  const port = await freePort()
  const url = `postgres://${target.username}@127.0.0.1:${port}${target.pathname}?options=-c%20search_path%3D${schema}`
  const cfg = await withDependencies({ startupTimeoutMs: 20000, postgresUrl: url }).write()
  t.teardown(() => cfg.remove())
  const gw = startGatewayProcess({ config: cfg.file })
  t.teardown(() => { gw.child.kill('SIGKILL') })
  // Nothing listens on the port yet: the gateway must keep retrying, not exit. Wait for its retry line rather than
  // a fixed time (booting takes seconds on a busy machine; a proxy up before the first attempt would prove nothing).
  t.ok(await until(() => /PostgreSQL not reachable yet; retrying/.test(gw.output())), 'the gateway retries PostgreSQL')
  t.ok(await until(() => (gw.output().match(/PostgreSQL not reachable yet; retrying/g) ?? []).length >= 2), 'and retries again')
  t.equal(gw.child.exitCode, null, 'still running while PostgreSQL is unreachable')
  const proxy = await startProxy(port, target)
  t.teardown(() => proxy.close())
  const listening = /listening at (http:\/\/127\.0\.0\.1:\d+)/
  t.ok(await until(() => listening.test(gw.output())), 'it listens once PostgreSQL is reachable')
  const base = listening.exec(gw.output())?.[1] ?? ''
  t.same(await (await fetch(`${base}/healthz`)).json(), { status: 'ok', config_version: 1 })
  const { rows } = await admin.query('SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = $1', [schema])
  t.ok((rows[0] as { n: number }).n > 0, 'the migrations ran in the test schema once the database was reachable')
  gw.child.kill('SIGTERM')
  t.equal(await gw.exited, 0)
})
