import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import Database from 'better-sqlite3'
import t from 'tap'
import { createSqliteStore } from '../../src/store/sqlite/create-sqlite-store.js'
import { runNode, type NodeRun } from '../helpers/run-node.js'

/**
 * `server.workers: N` with SQLite: N processes write one file. WAL plus busy_timeout make a writer wait for the
 * lock instead of failing, and fan-out leases are claimed in IMMEDIATE transactions, so two workers never both
 * claim (and deliver) one dispatch.
 */
const CHILD = fileURLToPath(new URL('./fixtures/sqlite-writer-child.js', import.meta.url))
const PROCESSES = 4

function runChild (args: string[]): Promise<NodeRun> {
  return runNode(CHILD, args)
}

async function freshFile (t: { teardown (fn: () => unknown): void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-writers-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  return join(dir, 'lanegate.db')
}

t.test(`${PROCESSES} processes creating intents in one SQLite file at once: every write succeeds`, async (t) => {
  const file = await freshFile(t)
  const startAt = String(Date.now() + 1500)
  const results = await Promise.all(Array.from({ length: PROCESSES }, (_, i) => runChild(['intents', file, startAt, '150', `w${i}`])))
  t.same(results.map((r) => [r.code, r.stdout, r.stderr]), Array.from({ length: PROCESSES }, () => [0, 'done\n', '']))
  const db = new Database(file, { readonly: true })
  t.teardown(() => db.close())
  t.same(db.prepare('SELECT COUNT(*) AS n FROM payment_intents').get(), { n: PROCESSES * 150 })
  t.same(db.pragma('journal_mode'), [{ journal_mode: 'wal' }])
})

t.test(`${PROCESSES} processes sweeping the same expired fan-out leases: each dispatch is claimed by exactly one`, async (t) => {
  const file = await freshFile(t)
  const store = createSqliteStore(file)
  const ids = Array.from({ length: 200 }, (_, i) => `fd_${String(i).padStart(4, '0')}`)
  for (const dispatchId of ids) {
    await store.dispatches.create({
      dispatchId, ownerOrgId: 'org_hq', clientId: 'svc-hq', operationType: 'price-change', payload: {}, status: 'previewed',
      createdAt: new Date().toISOString(), stores: [{ storeOrgId: 'org_s1', preview: { status: 'ok' } }],
    })
    // Committed by a worker whose lease ran out long ago (it died).
    await store.dispatches.beginCommit(dispatchId, 'org_hq', new Date().toISOString(), 1)
  }
  await store.close()
  const startAt = String(Date.now() + 1500)
  const results = await Promise.all(Array.from({ length: PROCESSES }, () => runChild(['claim', file, startAt])))
  t.same(results.map((r) => [r.code, r.stderr]), Array.from({ length: PROCESSES }, () => [0, '']))
  const claims = results.flatMap((r) => JSON.parse(r.stdout) as string[])
  t.equal(claims.length, ids.length, 'no dispatch claimed twice')
  t.same([...new Set(claims)].sort(), ids, 'every dispatch claimed')
})
