import t from 'tap'
import autocannon from 'autocannon'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openConfigStore } from '../../src/config-store/config-store.js'
import { appliedEverywhere, fleetConfig, PROCESSOR_PATH, processorNeeds, processorStatus, startFollower, type FleetInstance } from '../helpers/config-fleet.js'
import { fetchGatewayToken } from '../helpers/fetch-token.js'
import { freePort } from '../helpers/own-redis.js'
import { ownPostgres, postgresBinariesPresent } from '../helpers/own-postgres.js'
import { repoPath } from '../helpers/paths.js'
import { sample, scrape } from '../helpers/prometheus.js'
import { runNode } from '../helpers/run-node.js'
import { TcpProxy } from '../helpers/tcp-proxy.js'
import { waitFor, waitForText } from '../helpers/wait-for.js'

if (!postgresBinariesPresent()) {
  if (process.env.LANEGATE_REQUIRE_SERVICES === '1') throw new Error('the PostgreSQL server binaries are missing (test/helpers/own-postgres.ts)')
  t.test('config store faults', { skip: 'no PostgreSQL server binaries to run a private server' }, async () => {})
} else {
  // A PostgreSQL of this test's own: it is stopped and started again (never the shared one).
  const pg = await ownPostgres()
  t.teardown(() => pg.remove())
  const fleet = fleetConfig()
  const home = await mkdtemp(join(tmpdir(), 'lanegate-faults-'))
  t.teardown(() => rm(home, { recursive: true, force: true }))
  // C reaches the store through a relay the test can cut.
  const proxy = new TcpProxy(await freePort(), { host: '127.0.0.1', port: pg.port })
  await proxy.open()
  t.teardown(() => proxy.close())
  const viaProxy = `postgres://postgres@127.0.0.1:${proxy.port}/postgres`
  const cli = (...args: string[]): ReturnType<typeof runNode> => runNode(repoPath('bin/lanegate.js'), ['config', ...args, '--store', pg.url])

  t.test('PostgreSQL stopped, an instance restarted meanwhile, a cut connection, a refusal on one host', async (t) => {
    const text = fleet.text()
    // log_level from a variable only A and B have: valid for them, not applicable on C.
    const perHost = fleet.set('server.log_level', '${FLEET_LOG_LEVEL}').text()
    const store = await openConfigStore(pg.url)
    t.teardown(() => store.close())
    await store.push({ text, message: 'first', author: 'ana' })
    const instances: FleetInstance[] = []
    t.teardown(() => Promise.all(instances.map((i) => i.stop())))
    const env = { FLEET_LOG_LEVEL: 'info' }
    instances.push(await startFollower(t, { home, name: 'a', storeUrl: pg.url, workers: 1, fleet, env }))
    instances.push(await startFollower(t, { home, name: 'b', storeUrl: pg.url, workers: 1, fleet, env }))
    instances.push(await startFollower(t, { home, name: 'c', storeUrl: viaProxy, workers: 1, fleet }))
    const [a, b, c] = instances as [FleetInstance, FleetInstance, FleetInstance]
    await appliedEverywhere(store, instances, 1)
    const load = await fetchGatewayToken(a.base, 'demo-checkout')

    // 1. PostgreSQL stops under load: traffic carries on, a push fails clearly.
    let stopLoad = (): void => {}
    const loaded = new Promise<autocannon.Result>((resolve, reject) => {
      const run = autocannon({ url: `${a.base}${PROCESSOR_PATH}`, connections: 2, duration: 3600, headers: { authorization: `Bearer ${load}` } }, (error, result) => error ? reject(error) : resolve(result))
      stopLoad = () => run.stop()
    })
    // A failed step must not leave an hour-long load running until tap's timeout.
    t.teardown(() => { stopLoad() })
    const fromA = a.output().length
    const fromC0 = c.output().length
    await pg.stop('fast')
    await waitForText(a.output, 'config store unreachable: version 1 keeps serving', { what: 'A to notice the store is down', from: fromA })
    const file = join(home, 'push.yaml')
    await writeFile(file, processorNeeds(fleet, 'create').text())
    const refused = await cli('push', file, '-m', 'while down')
    t.equal(refused.code, 4, 'exit 4: the store is unreachable')
    t.match(refused.stderr, /^config: config store postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres unreachable: /)
    const ready = await (await fetch(`${a.admin}/readyz`)).json()
    t.match(ready, { status: 'ready', config: { source: 'store', version: 1, store_reachable: false } }, '/readyz: still ready, on version 1, store unreachable')

    // 2. B restarted while PostgreSQL is down starts on its saved copy, and says so.
    await b.stop()
    const b2 = await startFollower(t, { home, name: 'b', storeUrl: pg.url, workers: 1, fleet, env })
    instances[1] = b2
    await waitForText(b2.output, /starting from the saved copy of version 1 \(data\/config-store\)/, { what: 'B to say it starts from its saved copy' })
    t.equal(await processorStatus(b2, await fetchGatewayToken(b2.base, 'demo-status')), 200)

    await pg.start()
    stopLoad()
    const result = await loaded
    t.same({ errors: result.errors, timeouts: result.timeouts, non2xx: result.non2xx }, { errors: 0, timeouts: 0, non2xx: 0 }, `no failed request of ${result.requests.total} while PostgreSQL was down`)
    await waitForText(a.output, 'config store reachable again', { what: 'A to reconnect', from: fromA })
    await waitForText(b2.output, 'config store reachable again', { what: 'B to reach the store it started without' })
    await waitForText(c.output, 'config store reachable again', { what: 'C to reconnect', from: fromC0 })

    // 3. C's store connection cut: a push reaches A and B at once, C within 2 s of reconnecting.
    await proxy.close()
    const fromC = c.output().length
    await waitForText(c.output, 'config store unreachable', { what: 'C to notice its cut connection', from: fromC })
    const v2 = await store.push({ text: processorNeeds(fleet, 'create').text(), message: 'needs create', author: 'bo' })
    await appliedEverywhere(store, [a, b2], v2.version)
    const cRow = (await store.instances()).find((r) => r.instanceId === c.instanceId)
    t.equal(cRow?.applied?.version, 1, 'C, cut off, still runs version 1')
    const reconnectedAt = Date.now()
    await proxy.open()
    const applied = await appliedEverywhere(store, [c], v2.version)
    const delay = (applied.get(c.instanceId) ?? 0) - reconnectedAt
    t.comment(`C applied version ${v2.version} ${delay} ms after its connection came back`)
    t.ok(delay <= 20_000, `within 10 x the 2 s goal (${delay} ms)`)
    t.equal(await processorStatus(c, await fetchGatewayToken(c.base, 'demo-status')), 403)

    // 4. A version C cannot apply: refused there only; status, metric and /readyz say so.
    const v3 = await store.push({ text: perHost, message: 'log level per host', author: 'cy' })
    await appliedEverywhere(store, [a, b2], v3.version)
    await waitFor(async () => (await store.instances()).some((r) => r.instanceId === c.instanceId && r.refused?.version === v3.version), { what: 'C to report its refusal' })
    const status = await cli('status')
    t.equal(status.code, 1, 'not converged')
    t.match(status.stdout, new RegExp(`${c.instanceId}\\t[^\\n]*version ${v2.version} since [^\\n]*BEHIND; REFUSED version ${v3.version}: [^\\n]*FLEET_LOG_LEVEL`))
    t.match(status.stdout, /\nnot converged\n$/)
    const families = await scrape(c.admin as string)
    t.equal(sample(families, 'lanegate_config_store_refused_total'), 1)
    t.equal(sample(families, 'lanegate_config_store_version', { version: String(v2.version), sha256: v2.sha256 }), 1)
    t.match(await (await fetch(`${c.admin}/readyz`)).json(), { config: { version: v2.version, refused: { version: v3.version, reason: /FLEET_LOG_LEVEL/ } } })
  })
}
