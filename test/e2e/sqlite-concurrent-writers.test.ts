import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import Database from 'better-sqlite3'
import t from 'tap'
import { createSqliteStore } from '../../src/store/sqlite/create-sqlite-store.js'
import { waitFor } from '../helpers/wait-for.js'

/**
 * `server.workers: N` with SQLite: N processes write one file. WAL plus busy_timeout make a writer wait for the
 * lock instead of failing, and fan-out leases are claimed in IMMEDIATE transactions, so two workers never both
 * claim (and deliver) one dispatch.
 */
const CHILD = fileURLToPath(new URL('./fixtures/sqlite-writer-child.js', import.meta.url))
const PROCESSES = 4

interface ChildRun { code: number | null, stdout: string, stderr: string }

/**
 * Runs one child per argument list; once every child has opened the file and said `ready`, tells them all to
 * start (a line on stdin), so that their writes overlap on any machine. Resolves with each one's exit and
 * output (stdout after its `ready` line).
 */
async function runTogether (argLists: string[][]): Promise<ChildRun[]> {
  const children = argLists.map((args) => {
    const child = spawn(process.execPath, [CHILD, ...args], { stdio: ['pipe', 'pipe', 'pipe'] })
    const run = { child, stdout: '', stderr: '' }
    child.stdout.on('data', (d: Buffer) => { run.stdout += d.toString() })
    child.stderr.on('data', (d: Buffer) => { run.stderr += d.toString() })
    const closed = new Promise<number | null>((resolve) => child.on('close', resolve))
    return { run, closed }
  })
  await waitFor(() => children.every(({ run }) => run.stdout.startsWith('ready\n')), { what: 'every writer to open the file' })
  for (const { run } of children) run.child.stdin.end('go\n')
  return Promise.all(children.map(async ({ run, closed }) => ({ code: await closed, stdout: run.stdout.slice('ready\n'.length), stderr: run.stderr })))
}

async function freshFile (t: { teardown (fn: () => unknown): void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-writers-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  return join(dir, 'lanegate.db')
}

t.test(`${PROCESSES} processes creating intents in one SQLite file at once: every write succeeds`, async (t) => {
  const file = await freshFile(t)
  const results = await runTogether(Array.from({ length: PROCESSES }, (_, i) => ['intents', file, '150', `w${i}`]))
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
  const results = await runTogether(Array.from({ length: PROCESSES }, () => ['claim', file]))
  t.same(results.map((r) => [r.code, r.stderr]), Array.from({ length: PROCESSES }, () => [0, '']))
  const claims = results.flatMap((r) => JSON.parse(r.stdout) as string[])
  t.equal(claims.length, ids.length, 'no dispatch claimed twice')
  t.same([...new Set(claims)].sort(), ids, 'every dispatch claimed')
})
