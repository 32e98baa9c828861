import t from 'tap'
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openConfigStore } from '../../src/config-store/config-store.js'
import { configStoreDb } from '../helpers/config-store-db.js'
import { fetchGatewayToken } from '../helpers/fetch-token.js'
import { spawnGateway, startGatewayProcess, type SpawnedGateway } from '../helpers/spawn-gateway.js'
import { gatewayFixture } from '../helpers/gateway-fixture.js'
import { processorNeeds } from '../helpers/config-fleet.js'
import { waitFor, waitForText } from '../helpers/wait-for.js'

const db = await configStoreDb()
if (typeof db === 'string') {
  t.test('following the config store', { skip: `${db} (set LANEGATE_REQUIRE_SERVICES=1 to fail instead)` }, async () => {})
} else {
  t.teardown(() => db.drop())
  const fixture = gatewayFixture()
  const config = await fixture.write()
  t.teardown(() => config.remove())
  const text = await readFile(config.file, 'utf8')
  const store = await openConfigStore(db.url)
  t.teardown(() => store.close())
  const home = await mkdtemp(join(tmpdir(), 'lanegate-follow-'))
  t.teardown(() => rm(home, { recursive: true, force: true }))
  const start = (storeUrl = db.url): Promise<SpawnedGateway> => spawnGateway({
    config: config.file,
    cwd: home,
    args: ['--port', '0', '--host', '127.0.0.1', '--config-store', storeUrl],
  })
  const stopped = async (gw: SpawnedGateway): Promise<void> => {
    gw.child.kill('SIGTERM')
    await gw.exited
  }
  /** The gateway's JSON log lines written since `from` (an offset in its output). */
  const linesSince = (gw: SpawnedGateway, from: number): Array<{ level: number, msg: string, author?: string }> =>
    gw.output().slice(from).split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { level: number, msg: string, author?: string })
  /** The processor config route's answer to a demo-status token (read scope only): 200, or 403 once it needs create. */
  const statusFor = async (gw: SpawnedGateway, token: string): Promise<number> =>
    (await fetch(`${gw.base}/api/v1/ecommerce/config/processor`, { headers: { authorization: `Bearer ${token}` } })).status

  t.test('no store and no saved copy: refuses to start with one clear line', async (t) => {
    const run = startGatewayProcess({ config: config.file, cwd: home, args: ['--port', '0', '--config-store', 'postgres://ops:hunter2@127.0.0.1:1/x'] })
    t.equal(await run.exited, 1)
    t.match(run.errors(), /^cannot start: config store postgres:\/\/ops:\*\*\*@127\.0\.0\.1:1\/x unreachable: .*; and data\/config-store holds no saved copy: not starting with no config\n$/)
  })

  t.test('an instance starts from the head and follows pushes, refusing here only what this host cannot apply', async (t) => {
    await store.push({ text, message: 'first', author: 'ana' })
    const gw = await start()
    t.teardown(() => stopped(gw))
    await waitForText(gw.output, 'config version 1 (by ana: first) running', { what: 'the start log line' })
    const token = await fetchGatewayToken(gw.base, 'demo-status')
    t.equal(await statusFor(gw, token), 200)

    const pushedAt = Date.now()
    const before2 = gw.output().length
    await store.push({ text: processorNeeds(fixture, 'create').text(), message: 'processor config needs create', author: 'bo' })
    await waitFor(async () => await statusFor(gw, token) === 403, { what: 'version 2 to refuse the read-only token' })
    t.comment(`push to applied: ${Date.now() - pushedAt} ms`)
    await waitForText(gw.output, 'config version 2 (by bo: processor config needs create) applied', { what: 'the apply log line' })
    t.same(linesSince(gw, before2).filter((l) => /config|version/.test(l.msg)).map((l) => l.msg), ['config version 2 (by bo: processor config needs create) applied'], 'one line for the apply')
    await waitFor(async () => (await store.instances()).some((i) => i.applied?.version === 2), { what: 'the instance to report version 2' })
    t.match(JSON.parse(await readFile(join(home, 'data/config-store/applied.json'), 'utf8')), { version: 2, author: 'bo' })

    // A value this host lacks (its environment has no such variable): valid elsewhere, refused here only.
    const from = gw.output().length
    await store.push({ text: fixture.set('server.log_level', '${LOG_LEVEL_ONLY_ON_OTHER_HOSTS}').text(), message: 'per-host key', author: 'cy' })
    await waitForText(gw.output, /config version 3 \(by cy\) refused on this host, version 2 keeps serving: [^"]*LOG_LEVEL_ONLY_ON_OTHER_HOSTS/, { what: 'the refusal log line', from })
    const errors = linesSince(gw, from).filter((l) => l.level >= 50)
    t.same(errors.map((l) => [l.msg.replace(/: .*/s, ''), l.author]), [['config version 3 (by cy) refused on this host, version 2 keeps serving', 'cy']], 'one error line for the refusal')
    t.equal(await statusFor(gw, token), 403, 'version 2 still decides')
    await waitFor(async () => (await store.instances()).some((i) => i.refused?.version === 3 && i.applied?.version === 2), { what: 'the refusal in the instances table' })

    await store.push({ text, message: 'back to read', author: 'ana' })
    await waitFor(async () => await statusFor(gw, token) === 200, { what: 'version 4 to let the read-only token in again' })
  })

  t.test('restarted while the store is unreachable, it starts from the saved copy and says so', async (t) => {
    const gw = await start('postgres://127.0.0.1:1/nothing')
    t.teardown(() => stopped(gw))
    await waitForText(gw.output, /config store postgres:\/\/127\.0\.0\.1:1\/nothing unreachable: [^"]*: starting from the saved copy of version 4 \(data\/config-store\); following the store once it answers/, { what: 'the saved-copy log line' })
    t.equal(await statusFor(gw, await fetchGatewayToken(gw.base, 'demo-status')), 200)
  })

  t.test('file mode is untouched: without --config-store no copy is written', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'lanegate-filemode-'))
    t.teardown(() => rm(dir, { recursive: true, force: true }))
    const gw = await spawnGateway({ config: config.file, cwd: dir, env: { LANEGATE_DATA_DIR: join(dir, 'data') } })
    t.teardown(() => stopped(gw))
    t.notMatch(gw.output(), /config store|config version/)
    t.notOk(existsSync(join(dir, 'data/config-store')))
  })
}
