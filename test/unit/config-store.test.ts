import t from 'tap'
import pg from 'pg'
import { openConfigStore, sha256, type ConfigStore } from '../../src/config-store/config-store.js'
import { ConfigStoreError } from '../../src/config-store/errors.js'
import { configStoreDb } from '../helpers/config-store-db.js'

const db = await configStoreDb()
if (typeof db === 'string') {
  t.test('config store', { skip: `${db} (set LANEGATE_REQUIRE_SERVICES=1 to fail instead)` }, async () => {})
} else {
  t.teardown(() => db.drop())
  const TEXT = '# the demo config\nissuer:\n  secret: ${ISSUER_SECRET}   # resolved by each instance\n'

  t.test('an empty store has no head; the first push is version 1 with no parent', async (t) => {
    const store = await openConfigStore(db.url)
    t.teardown(() => store.close())
    t.equal(await store.head(), undefined)
    t.equal(await store.headVersion(), 0)
    const pushed = await store.push({ text: TEXT, message: 'first', author: 'ana', ifVersion: 0 })
    t.match(pushed, { version: 1, parent: null, text: TEXT, sha256: sha256(TEXT), author: 'ana', message: 'first', rollbackOf: null })
    t.same(await store.get(1), pushed)
  })

  t.test('the stored text is the YAML exactly as pushed: ${ENV} stays a reference, comments stay', async (t) => {
    const client = new pg.Client({ connectionString: db.url })
    await client.connect()
    t.teardown(() => client.end())
    const { rows } = await client.query<{ text: string, sha256: string }>('SELECT text, sha256 FROM lanegate_config_versions WHERE version = 1')
    t.same(rows, [{ text: TEXT, sha256: sha256(TEXT) }])
    t.match(rows[0]?.text, /\$\{ISSUER_SECRET\}/)
  })

  t.test('versions grow, each naming its parent; history lists them newest first without text', async (t) => {
    const store = await openConfigStore(db.url)
    t.teardown(() => store.close())
    const second = await store.push({ text: `${TEXT}# two\n`, message: 'second', author: 'bo' })
    const third = await store.push({ text: TEXT, message: 'back to one', author: 'ana', rollbackOf: 1 })
    t.match([second.version, second.parent, third.version, third.parent, third.rollbackOf], [2, 1, 3, 2, 1])
    const history = await store.history()
    t.same(history.map((v) => [v.version, v.author, v.message]), [[3, 'ana', 'back to one'], [2, 'bo', 'second'], [1, 'ana', 'first']])
    t.notOk('text' in (history[0] ?? {}))
    t.equal((await store.head())?.version, 3)
  })

  t.test('a version cannot be changed nor deleted', async (t) => {
    const client = new pg.Client({ connectionString: db.url })
    await client.connect()
    t.teardown(() => client.end())
    await t.rejects(client.query("UPDATE lanegate_config_versions SET text = 'x' WHERE version = 1"), /immutable/)
    await t.rejects(client.query('DELETE FROM lanegate_config_versions WHERE version = 1'), /immutable/)
  })

  t.test('--if-version: a push made against an old head is refused with conflict and stores nothing', async (t) => {
    const store = await openConfigStore(db.url)
    t.teardown(() => store.close())
    const head = await store.headVersion()
    const error = await store.push({ text: 'x: 1\n', message: 'stale', author: 'bo', ifVersion: head - 1 }).catch((e: unknown) => e)
    t.ok(error instanceof ConfigStoreError)
    t.match(error, { code: 'conflict', head, message: `the head is version ${head}, not ${head - 1}: someone pushed meanwhile (pull, merge, push again)` })
    t.equal(await store.headVersion(), head)
  })

  t.test('two concurrent pushes with the same --if-version: exactly one wins', async (t) => {
    // Two stores: two connections, as two operators' CLIs would have.
    const [a, b] = await Promise.all([openConfigStore(db.url), openConfigStore(db.url)])
    t.teardown(async () => { await a.close(); await b.close() })
    const head = await a.headVersion()
    for (let round = 0; round < 5; round++) {
      const base = head + round
      const results = await Promise.allSettled([
        a.push({ text: `a: ${round}\n`, message: 'a', author: 'a', ifVersion: base }),
        b.push({ text: `b: ${round}\n`, message: 'b', author: 'b', ifVersion: base }),
      ])
      const won = results.filter((r) => r.status === 'fulfilled')
      const lost = results.filter((r) => r.status === 'rejected')
      t.equal(won.length, 1, `round ${round}: one push wins`)
      t.match(lost.map((r) => r.reason), [{ code: 'conflict', head: base + 1 }], `round ${round}: the other gets a conflict`)
    }
    t.equal(await a.headVersion(), head + 5)
  })

  t.test('a push notifies lanegate_config with the new version', async (t) => {
    const listener = new pg.Client({ connectionString: db.url })
    await listener.connect()
    t.teardown(() => listener.end())
    await listener.query('LISTEN lanegate_config')
    const heard = new Promise<string | undefined>((resolve) => listener.once('notification', (n) => resolve(n.payload)))
    const store = await openConfigStore(db.url)
    t.teardown(() => store.close())
    const pushed = await store.push({ text: 'n: 1\n', message: 'notify', author: 'a' })
    t.equal(await heard, String(pushed.version))
  })

  t.test('instances report heartbeats, applied and refused versions', async (t) => {
    const store: ConfigStore = await openConfigStore(db.url)
    t.teardown(() => store.close())
    await store.report({ instanceId: 'h1:10', worker: 1, host: 'h1', pid: 11, startedAt: 1000, applied: { version: 2, sha256: 'ab', at: 2000 } })
    await store.report({ instanceId: 'h1:10', worker: 1, host: 'h1', pid: 11, startedAt: 1000, applied: { version: 2, sha256: 'ab', at: 2000 }, refused: { version: 3, reason: 'no file', at: 3000 } })
    const rows = await store.instances()
    t.equal(rows.length, 1)
    t.match(rows[0], { instanceId: 'h1:10', worker: 1, host: 'h1', pid: 11, startedAt: 1000, applied: { version: 2, sha256: 'ab', at: 2000 }, refused: { version: 3, reason: 'no file', at: 3000 } })
    t.ok((rows[0]?.heartbeatAt ?? 0) > 0)
  })

  t.test("instances lists only processes heard from lately; forgetGone (on a follower's first report) deletes rows gone for a week", async (t) => {
    const client = new pg.Client({ connectionString: db.url })
    await client.connect()
    t.teardown(() => client.end())
    const insert = async (id: string, heartbeatAt: number): Promise<void> => {
      await client.query(`INSERT INTO lanegate_config_instances (instance_id, worker, host, pid, started_at, heartbeat_at)
        VALUES ($1, 0, 'h', 1, 0, $2)`, [id, heartbeatAt])
    }
    await insert('gone-a-minute:1', Date.now() - 60_000)
    await insert('gone-a-month:1', Date.now() - 30 * 86_400_000)
    const store = await openConfigStore(db.url)
    t.teardown(() => store.close())
    t.notOk((await store.instances()).some((row) => row.instanceId.startsWith('gone-')), 'neither is live')
    const gone = async (): Promise<string[]> => (await store.instances(3_600_000_000)).filter((row) => row.instanceId.startsWith('gone-')).map((row) => row.instanceId)
    t.same(await gone(), ['gone-a-minute:1', 'gone-a-month:1'], 'opening a store (a read-only command) deletes nothing')
    await store.forgetGone()
    t.same(await gone(), ['gone-a-minute:1'], 'the month-old row is forgotten')
  })

  t.test('an unreachable store fails with unreachable, naming the URL without its password', async (t) => {
    const error = await openConfigStore('postgres://ops:hunter2@127.0.0.1:1/nothing').catch((e: unknown) => e)
    t.match(error, { code: 'unreachable' })
    t.match((error as Error).message, /^config store postgres:\/\/ops:\*\*\*@127\.0\.0\.1:1\/nothing unreachable: /)
    t.notMatch((error as Error).message, /hunter2/)
  })
}
