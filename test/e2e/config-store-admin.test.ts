import t from 'tap'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fastify from 'fastify'
import { mountConfigStoreRoutes } from '../../src/config-store/admin-routes.js'
import { openConfigStore, sha256, type VersionSummary } from '../../src/config-store/config-store.js'
import { configStoreDb } from '../helpers/config-store-db.js'
import { fetchGatewayToken } from '../helpers/fetch-token.js'
import { spawnGateway, type SpawnedGateway } from '../helpers/spawn-gateway.js'
import { gatewayFixture } from '../helpers/gateway-fixture.js'
import { waitFor } from '../helpers/wait-for.js'
import { appliedEverywhere, processorNeeds, type FleetInstance } from '../helpers/config-fleet.js'
import { hostname } from 'node:os'

const TOKEN = 'config-store-admin-token-0123456789'

const db = await configStoreDb()
if (typeof db === 'string') {
  t.test('config store on the admin listener', { skip: `${db} (set LANEGATE_REQUIRE_SERVICES=1 to fail instead)` }, async () => {})
} else {
  t.teardown(() => db.drop())
  // One text for the fleet: the admin listener behind a bearer token, the worker count per host (${ENV}).
  const fixture = gatewayFixture()
    .set('server.workers', '${LANEGATE_WORKERS:-1}')
    .set('admin.auth', { token_env: 'LANEGATE_CONSOLE_TEST_TOKEN' })
  const config = await fixture.write()
  t.teardown(() => config.remove())
  const text = await readFile(config.file, 'utf8')
  const store = await openConfigStore(db.url)
  t.teardown(() => store.close())
  const home = await mkdtemp(join(tmpdir(), 'lanegate-cfg-admin-'))
  t.teardown(() => rm(home, { recursive: true, force: true }))
  const auth = { authorization: `Bearer ${TOKEN}` }

  const start = async (name: string, workers: number): Promise<SpawnedGateway & { adminBase: string }> => {
    const cwd = join(home, name)
    await import('node:fs/promises').then((fs) => fs.mkdir(cwd))
    const gw = await spawnGateway({
      config: config.file,
      cwd,
      env: { LANEGATE_ADMIN_HOST: '0.0.0.0', LANEGATE_CONSOLE_TEST_TOKEN: TOKEN, LANEGATE_WORKERS: String(workers) },
      args: ['--port', '0', '--host', '127.0.0.1', '--config-store', db.url],
    })
    t.teardown(async () => { gw.child.kill('SIGTERM'); await gw.exited })
    return { ...gw, adminBase: (gw.admin ?? '').replace('0.0.0.0', '127.0.0.1') }
  }

  t.test('versions, pushes and the fleet on the admin listeners of a single process and of a primary with 2 workers', async (t) => {
    await store.push({ text, message: 'first', author: 'ana' })
    const [single, cluster] = await Promise.all([start('single', 1), start('cluster', 2)])
    // The cluster answers once one worker listens: wait until both workers follow the store.
    await appliedEverywhere(store, [{ instanceId: `${hostname()}:${single.child.pid}`, workers: 1 }, { instanceId: `${hostname()}:${cluster.child.pid}`, workers: 2 }] as FleetInstance[], 1)

    const denied = await fetch(`${cluster.adminBase}/config/versions`)
    t.same([denied.status, await denied.json()], [401, { error: 'Unauthenticated.' }], 'behind admin.auth like every admin route')

    const following = await fetch(`${cluster.adminBase}/config/store`, { headers: auth })
    t.same([following.status, await following.json()], [200, { following: true }])
    const list = await fetch(`${single.adminBase}/config/versions`, { headers: auth })
    const first = await store.get(1)
    t.equal(list.status, 200)
    t.equal(list.headers.get('etag'), '"1"')
    t.same(await list.json(), { head: 1, versions: [{ version: 1, parent: null, sha256: sha256(text), author: 'ana', message: 'first', rollbackOf: null, createdAt: first?.createdAt }] })
    const one = await fetch(`${cluster.adminBase}/config/versions/1`, { headers: auth })
    t.same([one.status, await one.json()], [200, first])
    const firstDiff = await fetch(`${single.adminBase}/config/versions/1/diff`, { headers: auth })
    const firstDiffBody = await firstDiff.json() as { version: number, parent: null, diff: string }
    t.same([firstDiff.status, firstDiffBody.version, firstDiffBody.parent], [200, 1, null])
    t.match(firstDiffBody.diff, /^--- empty\n\+\+\+ version 1\n/)
    // The console shows this diff: the secret hashes of the whole first version are redacted, the rest is not.
    t.ok(text.includes('$scrypt$') && !firstDiffBody.diff.includes('$scrypt$'), 'no secret hash in the diff')
    t.match(firstDiffBody.diff, /\n\+ +- \{ created: "?2026-11-01"?, hash: "?\[redacted\]"? \}\n/)
    const missing = await fetch(`${single.adminBase}/config/versions/9`, { headers: auth })
    t.same([missing.status, await missing.json()], [404, { error: 'config_version_not_found', message: 'No config version 9.' }])

    const post = (base: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> =>
      fetch(`${base}/config/versions`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })
    const invalid = await post(single.adminBase, { text: fixture.set('issuer.algorithm', 'HS1024').text(), message: 'typo' })
    const algorithmLine = text.split('\n').findIndex((l) => /^\s*algorithm:/.test(l)) + 1
    t.equal(invalid.status, 422)
    t.match(await invalid.json(), { error: 'config_invalid', problems: [{ path: 'issuer.algorithm', line: algorithmLine, message: /^must be one of: / }], message: 'The config is invalid; nothing was stored.' })
    const stale = await post(single.adminBase, { text, message: 'stale' }, { 'if-match': '"0"' })
    t.same([stale.status, await stale.json()], [412, { error: 'config_version_conflict', head: 1, message: 'The config head is no longer the version in If-Match: pull it, merge, and push again.' }])
    const noMessage = await post(single.adminBase, { text })
    t.equal(noMessage.status, 400)
    t.equal(await store.headVersion(), 1, 'nothing stored by the refused pushes')

    const pushedAt = Date.now()
    const pushed = await post(cluster.adminBase, { text: processorNeeds(fixture, 'create').text(), message: 'processor config needs create' }, { 'if-match': '"1"' })
    t.equal(pushed.status, 201)
    t.same([pushed.headers.get('etag'), pushed.headers.get('location')], ['"2"', '/config/versions/2'])
    t.match(await pushed.json(), { version: 2, parent: 1, author: 'admin', message: 'processor config needs create', rollbackOf: null })

    // Every process applies it: the single one, and each worker of the cluster (the primary's /metrics merges them).
    const tokens = await Promise.all([fetchGatewayToken(single.base, 'demo-status'), fetchGatewayToken(cluster.base, 'demo-status')])
    const status = async (gw: SpawnedGateway, token: string): Promise<number> =>
      (await fetch(`${gw.base}/api/v1/ecommerce/config/processor`, { headers: { authorization: `Bearer ${token}` } })).status
    await waitFor(async () => await status(single, tokens[0]) === 403, { what: 'the single process to apply version 2' })
    const v2 = await store.get(2)
    await waitFor(async () => {
      const metrics = await (await fetch(`${cluster.adminBase}/metrics`, { headers: auth })).text()
      return metrics.includes(`lanegate_config_store_version{version="2",sha256="${v2?.sha256}"} 1`) && !metrics.includes('lanegate_config_store_version{version="1"')
    }, { what: 'both workers to report version 2 and none version 1' })
    t.comment(`push to applied everywhere: ${Date.now() - pushedAt} ms`)
    for (let i = 0; i < 6; i++) t.equal(await status(cluster, tokens[1]), 403, `cluster request ${i} answered by version 2`)
    // A store's version is a reload like the file's: counted, and in the console's reload history.
    const singleMetrics = await (await fetch(`${single.adminBase}/metrics`, { headers: auth })).text()
    t.match(singleMetrics, /\nlanegate_config_reloads_total\{result="applied"\} 1\n/)
    const reloads = await (await fetch(`${single.adminBase}/api/console/config`, { headers: auth })).json() as { reloads: { outcome: string }[] }
    t.ok(reloads.reloads.some((r) => r.outcome === 'applied'), 'the console lists the applied version')

    const fleet = await waitFor(async () => {
      const body = await (await fetch(`${single.adminBase}/config/fleet`, { headers: auth })).json() as { converged: boolean, instances: { workers: number }[] }
      return body.converged ? body : undefined
    }, { what: 'the fleet to converge on version 2' })
    t.match(fleet, { head: 2, converged: true })
    const byWorkers = [...fleet.instances].sort((a, b) => a.workers - b.workers)
    t.match(byWorkers, [
      { workers: 1, pid: single.child.pid, appliedVersion: 2, appliedSha256: v2?.sha256, converged: true, refused: null },
      { workers: 2, pid: cluster.child.pid, appliedVersion: 2, appliedSha256: v2?.sha256, converged: true, refused: null },
    ])

    const ready = await (await fetch(`${single.adminBase}/readyz`)).json()
    t.match(ready, { status: 'ready', config: { source: 'store', version: 2, sha256: v2?.sha256, author: 'admin', store_reachable: true, refused: null } })
    // Under server.workers, each worker's entry of the primary's /readyz says what that worker runs.
    const clusterReady = await waitFor(async () => {
      const body = await (await fetch(`${cluster.adminBase}/readyz`)).json() as { status: string, workers: Array<{ config?: { version: number, sha256: string } }> }
      return body.status === 'ready' ? body : undefined
    }, { what: 'the cluster to report ready' })
    t.same(clusterReady.workers.map((w) => [w.config?.version, w.config?.sha256]), [[2, v2?.sha256], [2, v2?.sha256]])
  })

  t.test('a push names its author: the admin Basic user over the body\'s author; with a bearer token, the body\'s', async (t) => {
    // A store of its own: these pushes must not reach the gateways above.
    const own = await configStoreDb()
    if (typeof own === 'string') throw new Error(own)
    t.teardown(() => own.drop())
    const app = fastify()
    mountConfigStoreRoutes(app, { url: own.url, baseDir: home })
    t.teardown(() => app.close())
    const plain = gatewayFixture().text()
    const push = async (authorization: string, message: string): Promise<[number, VersionSummary]> => {
      const res = await app.inject({ method: 'POST', url: '/config/versions', headers: { authorization }, payload: { text: plain, message, author: 'from-the-body' } })
      return [res.statusCode, res.json()]
    }
    const basic = await push(`Basic ${Buffer.from('ops:open-sesame').toString('base64')}`, 'by basic')
    t.same(basic, [201, { version: 1, parent: null, sha256: sha256(plain), author: 'ops', message: 'by basic', rollbackOf: null, createdAt: basic[1].createdAt }])
    const bearer = await push(`Bearer ${TOKEN}`, 'by bearer')
    t.same(bearer, [201, { version: 2, parent: 1, sha256: sha256(plain), author: 'from-the-body', message: 'by bearer', rollbackOf: null, createdAt: bearer[1].createdAt }])
  })
}
