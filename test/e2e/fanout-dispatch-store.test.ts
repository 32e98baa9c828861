import t from 'tap'
import Database from 'better-sqlite3'
import pg from 'pg'
import type { DispatchStore, NewDispatch } from '../../src/store/dispatch-store.js'
import { createSqliteDispatchStore } from '../../src/store/sqlite/dispatch-store.js'
import { createPostgresDispatchStore } from '../../src/store/postgres/dispatch-store.js'
import { migratePostgres } from '../../src/store/postgres/migrate.js'
import { postgresMigrations } from '../../src/store/postgres/create-postgres-store.js'
import { migrateSqlite } from '../../src/store/sqlite/migrate.js'
import { sqliteMigrations } from '../../src/store/sqlite/create-sqlite-store.js'

/**
 * One contract suite run against both DispatchStore implementations (SQLite in memory, PostgreSQL in a schema of
 * its own). PostgreSQL is skipped when unreachable, unless LANEGATE_REQUIRE_SERVICES=1 (then it fails).
 */
const PG_URL = process.env.LANEGATE_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

type Driver = { name: string, open: () => Promise<{ store: DispatchStore, close: () => Promise<void> }> }

const drivers: Driver[] = [
  {
    name: 'sqlite',
    open: async () => {
      const db = new Database(':memory:')
      migrateSqlite(db, sqliteMigrations)
      return { store: createSqliteDispatchStore(db), close: async () => { db.close() } }
    },
  },
  {
    name: 'postgres',
    open: async () => {
      const schema = `fanout_test_${process.pid}_${Date.now()}`
      const admin = new pg.Client({ connectionString: PG_URL })
      await admin.connect()
      await admin.query(`CREATE SCHEMA ${schema}`)
      await admin.end()
      const pool = new pg.Pool({ connectionString: PG_URL, max: 10, options: `-c search_path=${schema}` })
      await migratePostgres(pool, postgresMigrations)
      return {
        store: createPostgresDispatchStore(pool),
        close: async () => {
          await pool.query(`DROP SCHEMA ${schema} CASCADE`)
          await pool.end()
        },
      }
    },
  },
]

let counter = 0
function newDispatch (overrides: Partial<NewDispatch> = {}): NewDispatch {
  counter++
  return {
    dispatchId: `01JTEST${String(counter).padStart(19, '0')}`,
    ownerOrgId: 'org_hq',
    clientId: 'svc-hq',
    operationType: 'price-change',
    payload: { product_code: '4011', retail_price: '0.79', nested: { a: [1, 2] } },
    status: 'previewed',
    createdAt: '2026-03-01T10:00:00.000Z',
    stores: [
      { storeOrgId: 'org_s2', preview: { status: 'ok', result: { summary: 'two' } } },
      { storeOrgId: 'org_s1', preview: { status: 'ok', result: { summary: 'one' } } },
    ],
    ...overrides,
  }
}

for (const driver of drivers) {
  t.test(driver.name, async (t) => {
    let opened: Awaited<ReturnType<Driver['open']>>
    try {
      opened = await driver.open()
    } catch (error) {
      if (process.env.LANEGATE_REQUIRE_SERVICES === '1') throw error
      t.plan(0, `${driver.name} unreachable (${(error as Error).message}); set LANEGATE_REQUIRE_SERVICES=1 to fail instead`)
      return
    }
    const { store } = opened
    t.teardown(() => opened.close())

    t.test('create then get returns the dispatch as created, stores in the given order', async (t) => {
      const d = newDispatch()
      await store.create(d)
      t.same(await store.get(d.dispatchId), {
        dispatchId: d.dispatchId,
        ownerOrgId: 'org_hq',
        clientId: 'svc-hq',
        operationType: 'price-change',
        payload: d.payload,
        status: 'previewed',
        createdAt: '2026-03-01T10:00:00.000Z',
        committedAt: null,
        completedAt: null,
        stores: [
          { storeOrgId: 'org_s2', preview: { status: 'ok', result: { summary: 'two' } }, delivery: null },
          { storeOrgId: 'org_s1', preview: { status: 'ok', result: { summary: 'one' } }, delivery: null },
        ],
      })
      t.equal(await store.get('01JNOPE0000000000000000000'), undefined)
    })

    t.test('beginCommit: not_found for another owner or an unknown id, not_committable after a failed preview', async (t) => {
      const d = newDispatch()
      const failed = newDispatch({ status: 'preview_failed' })
      await store.create(d)
      await store.create(failed)
      const now = '2026-03-01T10:01:00.000Z'
      t.same(await store.beginCommit(d.dispatchId, 'org_other', now, 1), { outcome: 'not_found' })
      t.same(await store.beginCommit('01JNOPE0000000000000000000', 'org_hq', now, 1), { outcome: 'not_found' })
      t.same(await store.beginCommit(failed.dispatchId, 'org_hq', now, 1), { outcome: 'not_committable', status: 'preview_failed' })
      t.equal((await store.get(d.dispatchId))?.status, 'previewed', 'untouched')
    })

    t.test('beginCommit marks every store pending in the same step (the outbox)', async (t) => {
      const d = newDispatch()
      await store.create(d)
      const result = await store.beginCommit(d.dispatchId, 'org_hq', '2026-03-01T10:01:00.000Z', 1)
      t.equal(result.outcome, 'committing')
      const dispatch = result.outcome === 'committing' ? result.dispatch : undefined
      t.equal(dispatch?.status, 'committing')
      t.equal(dispatch?.committedAt, '2026-03-01T10:01:00.000Z')
      t.same(dispatch?.stores.map((s) => s.delivery), [
        { status: 'pending', attempts: 0, updatedAt: '2026-03-01T10:01:00.000Z' },
        { status: 'pending', attempts: 0, updatedAt: '2026-03-01T10:01:00.000Z' },
      ])
      t.same(await store.beginCommit(d.dispatchId, 'org_hq', '2026-03-01T10:02:00.000Z', 1), { outcome: 'not_committable', status: 'committing' })
    })

    t.test('100 concurrent beginCommit calls: exactly one wins', async (t) => {
      const d = newDispatch()
      await store.create(d)
      const results = await Promise.all(Array.from({ length: 100 }, () =>
        store.beginCommit(d.dispatchId, 'org_hq', '2026-03-01T10:01:00.000Z', 1)))
      t.equal(results.filter((r) => r.outcome === 'committing').length, 1)
      t.equal(results.filter((r) => r.outcome === 'not_committable').length, 99)
    })

    t.test('finish waits for every store, then computes committed or partially_failed; settled rows stay settled', async (t) => {
      const ok = newDispatch()
      const partial = newDispatch()
      for (const d of [ok, partial]) {
        await store.create(d)
        await store.beginCommit(d.dispatchId, 'org_hq', '2026-03-01T10:01:00.000Z', 1)
      }
      const at = '2026-03-01T10:02:00.000Z'
      await store.recordDelivery(ok.dispatchId, 'org_s1', { status: 'applied', attempts: 1, result: { applied: true } }, at)
      t.equal(await store.finish(ok.dispatchId, at), undefined, 'org_s2 still pending')
      await store.recordDelivery(ok.dispatchId, 'org_s2', { status: 'pending', attempts: 1, error: { upstream_status: 503 } }, at)
      await store.recordDelivery(ok.dispatchId, 'org_s2', { status: 'applied', attempts: 2, result: { applied: true } }, at)
      await store.recordDelivery(ok.dispatchId, 'org_s2', { status: 'failed', attempts: 3 }, at)
      t.equal(await store.finish(ok.dispatchId, at), 'committed')
      t.equal(await store.finish(ok.dispatchId, at), undefined, 'only once')
      const done = await store.get(ok.dispatchId)
      t.same([done?.status, done?.completedAt, done?.stores.map((s) => [s.delivery?.status, s.delivery?.attempts])],
        ['committed', at, [['applied', 2], ['applied', 1]]])

      await store.recordDelivery(partial.dispatchId, 'org_s1', { status: 'applied', attempts: 1, result: null }, at)
      await store.recordDelivery(partial.dispatchId, 'org_s2', { status: 'failed', attempts: 5, error: { upstream_status: 503 } }, at)
      t.equal(await store.finish(partial.dispatchId, at), 'partially_failed')
      t.same((await store.get(partial.dispatchId))?.stores[0]?.delivery,
        { status: 'failed', attempts: 5, error: { upstream_status: 503 }, updatedAt: at })
    })

    t.test('claimExpired claims committing dispatches whose lease ended, once', async (t) => {
      const expired = newDispatch()
      const live = newDispatch()
      await store.create(expired)
      await store.create(live)
      const now = 10_000_000_000_000
      await store.beginCommit(expired.dispatchId, 'org_hq', '2026-03-01T10:01:00.000Z', now - 1)
      await store.beginCommit(live.dispatchId, 'org_hq', '2026-03-01T10:01:00.000Z', now + 60_000)
      const claimed = await store.claimExpired(now, now + 30_000, 100)
      t.ok(claimed.includes(expired.dispatchId))
      t.notOk(claimed.includes(live.dispatchId))
      t.notOk((await store.claimExpired(now, now + 30_000, 100)).includes(expired.dispatchId), 'the new lease holds')
      await store.renewLease(live.dispatchId, now - 1)
      t.ok((await store.claimExpired(now, now + 30_000, 100)).includes(live.dispatchId), 'a lease not renewed runs out')
    })

    t.test('concurrent claimers never get the same dispatch', async (t) => {
      const ids: string[] = []
      const now = 20_000_000_000_000
      for (let i = 0; i < 10; i++) {
        const d = newDispatch()
        await store.create(d)
        await store.beginCommit(d.dispatchId, 'org_hq', '2026-03-01T10:01:00.000Z', now - 1)
        ids.push(d.dispatchId)
      }
      const claims = await Promise.all(Array.from({ length: 5 }, () => store.claimExpired(now, now + 30_000, 100)))
      const all = claims.flat().filter((id) => ids.includes(id))
      t.equal(all.length, 10)
      t.equal(new Set(all).size, 10)
    })

    t.test('summary: dispatches by status, and the latest created first with their stores (the console)', async (t) => {
      const before = await store.summary(2)
      const newest = newDispatch({ createdAt: '2099-01-01T00:00:00.000Z' })
      const older = newDispatch({ createdAt: '2098-01-01T00:00:00.000Z', status: 'preview_failed' })
      await store.create(older)
      await store.create(newest)
      const after = await store.summary(2)
      t.same(after.byStatus, { ...before.byStatus, previewed: (before.byStatus.previewed ?? 0) + 1, preview_failed: (before.byStatus.preview_failed ?? 0) + 1 })
      t.same(after.latest, [await store.get(newest.dispatchId), await store.get(older.dispatchId)])
    })
  })
}
