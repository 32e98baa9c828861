import t from 'tap'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import pino from 'pino'
import { CONFIG_CHANNEL, openConfigStore, type ConfigStore } from '../../src/config-store/config-store.js'
import { followStore, type FollowState } from '../../src/config-store/follower.js'
import type { ReloadResult } from '../../src/reload/live-config.js'
import { configStoreDb } from '../helpers/config-store-db.js'
import { freePort } from '../helpers/spawn-gateway.js'
import { TcpProxy } from '../helpers/tcp-proxy.js'
import { waitFor } from '../helpers/wait-for.js'

// The follower on the real PostgreSQL, with a stand-in for the gateway's applyText: how versions reach it (LISTEN,
// not the poll) and when a version this host refused is tried again (SIGHUP's checkNow, not on every look).

interface Teardown { teardown: (fn: () => unknown) => void }

interface Watched {
  /** The texts applyText was asked to apply, in order. */
  texts: string[]
  /** Resolves with the next state told to onApplied (or onRefused). */
  nextApplied: () => Promise<FollowState>
  nextRefused: () => Promise<FollowState>
  checkNow: () => void
}

/** Resolves with the next value `register` hands to its listener. */
function nextOf (listeners: Set<(state: FollowState) => void>): Promise<FollowState> {
  return new Promise((resolve) => {
    const once = (state: FollowState): void => {
      listeners.delete(once)
      resolve(state)
    }
    listeners.add(once)
  })
}

const db = await configStoreDb()
if (typeof db === 'string') {
  t.test('the config store follower', { skip: `${db} (set LANEGATE_REQUIRE_SERVICES=1 to fail instead)` }, async () => {})
} else {
  const url = db.url
  t.teardown(() => db.drop())
  const store = await openConfigStore(url)
  t.teardown(() => store.close())
  await store.push({ text: 'v: 1\n', message: 'first', author: 'ana' })
  const dataDir = await mkdtemp(join(tmpdir(), 'lanegate-follower-'))
  t.teardown(() => rm(dataDir, { recursive: true, force: true }))

  /**
   * A follower started on the head, reading it again only once a minute unless told (a push's notification,
   * checkNow), reporting on every look; resolves once its first look is done (its heartbeat is in the store), so
   * its LISTEN connection is up.
   */
  async function follower (t: Teardown, from: ConfigStore, accept: (text: string) => boolean): Promise<Watched> {
    const started = await from.head()
    if (started === undefined) throw new Error('the store is empty')
    const applied = new Set<(state: FollowState) => void>()
    const refused = new Set<(state: FollowState) => void>()
    const texts: string[] = []
    const applyText = async (text: string): Promise<ReloadResult> => {
      texts.push(text)
      return accept(text) ? { outcome: 'applied', version: texts.length, restartRequired: [] } : { outcome: 'rejected', version: texts.length, error: new Error(`cannot apply ${text.trim()} here`) }
    }
    const since = Date.now()
    const f = followStore({
      url, dataDir, baseDir: dataDir, started, notes: [], gateway: { applyText }, logger: pino({ level: 'silent' }),
      onApplied: (state) => { for (const l of [...applied]) l(state) },
      onRefused: (state) => { for (const l of [...refused]) l(state) },
      pollMs: 60_000,
      heartbeatMs: 0,
    })
    t.teardown(() => f.stop())
    await heartbeatAfter(from, since)
    return { texts, nextApplied: () => nextOf(applied), nextRefused: () => nextOf(refused), checkNow: () => { f.checkNow() } }
  }

  /** Waits for this process's heartbeat to be newer than `time` (a look of the follower's finished). */
  async function heartbeatAfter (from: ConfigStore, time: number): Promise<void> {
    await waitFor(async () => (await from.instances()).some((row) => row.pid === process.pid && row.heartbeatAt >= time), { what: 'the follower\'s heartbeat' })
  }

  t.test('a push reaches it by LISTEN/NOTIFY: applied long before the minute-long poll would look', async (t) => {
    const f = await follower(t, store, () => true)
    const applied = f.nextApplied()
    const pushed = await store.push({ text: 'v: 2\n', message: 'second', author: 'ana' })
    t.same((await applied).applied.version, pushed.version)
    t.same(f.texts, ['v: 2\n'])
  })

  t.test('a version this host refused is not tried again on every look, only when told (SIGHUP)', async (t) => {
    let fixed = false
    const f = await follower(t, store, () => fixed)
    const refused = f.nextRefused()
    const pushed = await store.push({ text: 'v: 3\n', message: 'needs a file this host lacks', author: 'ana' })
    t.same((await refused).refused?.version, pushed.version)
    // A notification with no newer version makes it look (its heartbeat moves) but not try the refused head again.
    const notifier = new pg.Client({ connectionString: url })
    await notifier.connect()
    t.teardown(() => notifier.end())
    const before = Date.now()
    await notifier.query(`NOTIFY ${CONFIG_CHANNEL}`)
    await heartbeatAfter(store, before)
    t.same(f.texts, ['v: 3\n'], 'a look without checkNow skips the head it refused')
    const refusedAgain = f.nextRefused()
    f.checkNow()
    t.same((await refusedAgain).refused?.version, pushed.version, 'told while still broken: tried again, refused again')
    fixed = true
    const applied = f.nextApplied()
    f.checkNow()
    t.same((await applied).applied.version, pushed.version, 'told once the host is fixed: applied')
    t.same(f.texts, ['v: 3\n', 'v: 3\n', 'v: 3\n'], 'tried three times: on the push, and on each SIGHUP')
  })

  t.test('a store going away logs it unreachable, not refusing LISTEN; coming back, reachable again', async (t) => {
    const target = new URL(url)
    const proxy = new TcpProxy(await freePort(), { host: target.hostname, port: Number(target.port || 5432) })
    await proxy.open()
    t.teardown(() => proxy.close())
    const viaProxy = new URL(url)
    viaProxy.host = `127.0.0.1:${proxy.port}`
    const started = await store.head()
    if (started === undefined) throw new Error('the store is empty')
    const messages: string[] = []
    const logger = pino({ level: 'info' }, { write: (line: string) => { messages.push((JSON.parse(line) as { msg: string }).msg) } })
    const since = Date.now()
    const f = followStore({
      url: viaProxy.toString(), dataDir, baseDir: dataDir, started, notes: [], logger, pollMs: 50, heartbeatMs: 0,
      gateway: { applyText: async () => ({ outcome: 'applied', version: 2, restartRequired: [] }) },
    })
    t.teardown(() => f.stop())
    await heartbeatAfter(store, since)
    await proxy.close()
    await waitFor(() => !f.state().storeReachable, { what: 'the follower to find the store gone' })
    await proxy.open()
    await waitFor(() => f.state().storeReachable, { what: 'the follower to find the store back' })
    t.same(messages, [
      `config version ${started.version} (by ${started.author}: ${started.message}) running`,
      `config store unreachable: version ${started.version} keeps serving; retrying every 50 ms`,
      'config store reachable again: following its head',
    ])
  })

  t.test('a store that answers but refuses LISTEN (the role\'s connection limit): warned once, pushes found by the poll, LISTEN tried again until it works', async (t) => {
    const role = `lg_follow_limit_${process.pid}`
    const admin = new pg.Client({ connectionString: url })
    await admin.connect()
    t.teardown(async () => {
      await admin.query(`DROP OWNED BY ${role}`).catch(() => {})
      await admin.query(`DROP ROLE IF EXISTS ${role}`).catch(() => {})
      await admin.end()
    })
    // One connection: the head reads and heartbeats take it, the LISTEN connection is refused (53300).
    await admin.query(`CREATE ROLE ${role} LOGIN CONNECTION LIMIT 1`)
    // The store's tables exist (made by the test's own store): each open still checks them with CREATE … IF NOT EXISTS.
    await admin.query(`GRANT CREATE ON SCHEMA public TO ${role}`)
    await admin.query(`GRANT ALL ON ALL TABLES IN SCHEMA public TO ${role}`)
    await admin.query(`GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO ${role}`)
    const limited = new URL(url)
    limited.username = role
    const started = await store.head()
    if (started === undefined) throw new Error('the store is empty')
    const messages: string[] = []
    const logger = pino({ level: 'info' }, { write: (line: string) => { messages.push((JSON.parse(line) as { msg: string }).msg) } })
    const texts: string[] = []
    const since = Date.now()
    const f = followStore({
      url: limited.toString(), dataDir, baseDir: dataDir, started, notes: [], logger, pollMs: 100, heartbeatMs: 0, listenRetryMs: 300,
      gateway: { applyText: async (text) => { texts.push(text); return { outcome: 'applied', version: texts.length + 1, restartRequired: [] } } },
    })
    t.teardown(() => f.stop())
    await heartbeatAfter(store, since)
    const noListen = 'config store: cannot LISTEN for pushes; reading the head every 100 ms, trying LISTEN again every 0.3 s'
    await waitFor(() => messages.includes(noListen), { what: 'the LISTEN warning' })
    t.equal(f.state().storeReachable, true, 'the store answers: reachable, not unreachable')
    const pushed = await store.push({ text: 'v: limited\n', message: 'found by the poll', author: 'ana' })
    await waitFor(() => f.state().applied.version === pushed.version, { what: 'the push applied by the poll' })
    t.same(texts, ['v: limited\n'])

    await admin.query(`ALTER ROLE ${role} CONNECTION LIMIT 2`)
    const listening = async (): Promise<boolean> => {
      const { rows } = await admin.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE usename = $1 AND query = $2', [role, `LISTEN ${CONFIG_CHANNEL}`])
      return rows[0]?.n === 1
    }
    await waitFor(listening, { what: 'the follower\'s LISTEN connection, once the role may open it' })
    await waitFor(() => messages.includes('config store: listening for pushes again'), { what: 'the recovery line' })
    t.equal(messages.filter((m) => m === noListen).length, 1, 'warned once for the whole time LISTEN was refused')
    t.notOk(messages.some((m) => m.startsWith('config store unreachable') || m.startsWith('config store failing')), 'never called unreachable or failing')
    await f.stop()
  })
}
