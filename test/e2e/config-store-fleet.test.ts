import t from 'tap'
import autocannon from 'autocannon'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openConfigStore } from '../../src/config-store/config-store.js'
import { appliedEverywhere, fleetConfig, PROCESSOR_PATH, processorNeeds, processorStatus, startFollower, type FleetInstance } from '../helpers/config-fleet.js'
import { configStoreDb } from '../helpers/config-store-db.js'
import { fetchGatewayToken } from '../helpers/fetch-token.js'
import { repoPath } from '../helpers/paths.js'
import { runNode } from '../helpers/run-node.js'

const PUSHES = 20

function percentile (values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] ?? 0
}

const db = await configStoreDb()
if (typeof db === 'string') {
  t.test('a fleet following the config store', { skip: `${db} (set LANEGATE_REQUIRE_SERVICES=1 to fail instead)` }, async () => {})
} else {
  t.teardown(() => db.drop())
  const fleet = fleetConfig()
  const home = await mkdtemp(join(tmpdir(), 'lanegate-fleet-'))
  t.teardown(() => rm(home, { recursive: true, force: true }))

  t.test(`three instances (two with 2 workers) under load take ${PUSHES} pushes with no failed request, then a rollback`, async (t) => {
    const text = fleet.text()
    const store = await openConfigStore(db.url)
    t.teardown(() => store.close())
    await store.push({ text, message: 'the fleet config', author: 'ana' })
    const instances: FleetInstance[] = []
    t.teardown(() => Promise.all(instances.map((i) => i.stop())))
    for (const [name, workers] of [['a', 1], ['b', 2], ['c', 2]] as const) instances.push(await startFollower(t, { home, name, storeUrl: db.url, workers, fleet }))
    await appliedEverywhere(store, instances, 1)

    // demo-checkout holds both scopes: every version lets it through, so any non-2xx under load is a dropped request.
    const loadTokens = await Promise.all(instances.map((i) => fetchGatewayToken(i.base, 'demo-checkout')))
    const deciderTokens = await Promise.all(instances.map((i) => fetchGatewayToken(i.base, 'demo-status')))
    const loads = instances.map((instance, i) => {
      let stop = (): void => {}
      const done = new Promise<autocannon.Result>((resolve, reject) => {
        const run = autocannon({ url: `${instance.base}${PROCESSOR_PATH}`, connections: 2, duration: 3600, headers: { authorization: `Bearer ${loadTokens[i]}` } }, (error, result) => error ? reject(error) : resolve(result))
        stop = () => run.stop()
      })
      return { done, stop }
    })

    const needsCreate = processorNeeds(fleet, 'create').text()
    const delays = new Map<string, number[]>(instances.map((i) => [i.instanceId, []]))
    for (let push = 1; push <= PUSHES; push++) {
      const restricted = push % 2 === 1
      const pushed = await store.push({ text: restricted ? needsCreate : text, message: `push ${push}: processor config needs ${restricted ? 'create' : 'read'}`, author: 'bo' })
      const applied = await appliedEverywhere(store, instances, pushed.version)
      for (const [id, at] of applied) delays.get(id)?.push(at - pushed.createdAt)
      // The request the change decides gets the new answer on every instance (and every worker: several tries).
      for (const [i, instance] of instances.entries()) {
        const answers = await Promise.all([0, 1, 2, 3].map(() => processorStatus(instance, deciderTokens[i] as string)))
        t.same(answers, [restricted ? 403 : 200, restricted ? 403 : 200, restricted ? 403 : 200, restricted ? 403 : 200], `push ${push} (version ${pushed.version}) on instance ${instance.instanceId}`)
      }
    }
    for (const load of loads) load.stop()
    const results = await Promise.all(loads.map((l) => l.done))
    for (const [i, result] of results.entries()) {
      t.same({ errors: result.errors, timeouts: result.timeouts, non2xx: result.non2xx, resets: result.resets }, { errors: 0, timeouts: 0, non2xx: 0, resets: 0 }, `instance ${instances[i]?.instanceId}: no failed request of ${result.requests.total}`)
      t.ok(result['2xx'] > 0, 'the load ran')
    }
    for (const [id, values] of delays) {
      const max = Math.max(...values)
      t.comment(`push to applied on ${id}: p50 ${percentile(values, 0.5)} ms, max ${max} ms over ${values.length} pushes`)
      // The goal is 2 s; a loaded CI machine gets 10 times that before this fails (the measured values are above).
      t.ok(max <= 20_000, `${id}: every push applied within 20 s (max ${max} ms)`)
    }

    // A rollback through the CLI restores version 1's behaviour everywhere; history says who and why.
    const rollback = await runNode(repoPath('bin/lanegate.js'), ['config', 'rollback', '1', '-m', 'back to the fleet config', '--author', 'cy', '--store', db.url])
    t.equal(rollback.code, 0, rollback.stderr)
    const head = await store.headVersion()
    await appliedEverywhere(store, instances, head)
    for (const [i, instance] of instances.entries()) t.equal(await processorStatus(instance, deciderTokens[i] as string), 200, `rolled back on ${instance.instanceId}`)
    const history = await runNode(repoPath('bin/lanegate.js'), ['config', 'history', '--limit', '1', '--store', db.url])
    t.match(history.stdout, new RegExp(`^${head}\\t[0-9a-f]{12}\\t[^\\t]+\\tcy\\tback to the fleet config \\(rollback to 1\\)\\t\\[running on [^\\]]*\\]\\n$`))
    const status = await runNode(repoPath('bin/lanegate.js'), ['config', 'status', '--store', db.url])
    t.equal(status.code, 0, status.stdout)
    t.match(status.stdout, `converged: every live instance runs version ${head}`)
  })
}
