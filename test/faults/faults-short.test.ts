import t from 'tap'
import { postgresBinariesPresent } from '../helpers/own-postgres.js'
import { brokenTargets } from './broken-target.js'
import { fanoutKill } from './fanout-kill.js'
import { postgresRestart } from './postgres-restart.js'
import { redisRestart } from './redis-restart.js'
import { slowReaders } from './slow-readers.js'

// The short fault suite (issue 27): each case of `npm run faults` for a few seconds under load. A case returns
// its figures and the checks that failed; the test asserts none did.

t.test('PostgreSQL stopped and started under keyed creates: 0 lost, 0 duplicated, 503 + Retry-After while down, never a 500', async (t) => {
  if (!postgresBinariesPresent()) {
    if (process.env.LANEGATE_REQUIRE_SERVICES === '1') throw new Error('PostgreSQL 15 binaries are required')
    t.comment('skip: PostgreSQL 15 binaries not installed')
    return
  }
  const row = await postgresRestart({ phaseMs: 1500, concurrency: 4 })
  t.comment(JSON.stringify(row))
  t.same(row.failures, [])
  t.same({ lost: row.lost, duplicated: row.duplicated }, { lost: 0, duplicated: 0 })
  t.ok((row.byStatus['201'] ?? 0) > 0 && (row.byStatus['503'] ?? 0) > 0, 'creates before and after, 503s while down')
  t.equal(row.byStatus['500'], undefined, 'no 500')
})

t.test('a broken proxy target (stall, reset mid-body, trickle, malformed) under load: documented 502s in time, no socket leak, a healthy lane unaffected', async (t) => {
  const row = await brokenTargets({ durationMs: 3000, concurrency: 4 })
  t.comment(JSON.stringify(row))
  t.same(row.failures, [])
  t.ok((row.byStatus['502'] ?? 0) > 0 && (row.byStatus['200'] ?? 0) > 0)
})

for (const [syncIntervalMs, onStoreError] of [[0, 'open'], [50, 'closed']] as const) {
  t.test(`Redis SIGKILLed and restarted (sync_interval_ms ${syncIntervalMs}, on_store_error ${onStoreError}): never a 500 or a bogus 429, /readyz 503 while down, counted again (2 s in npm run faults; here within 20 s)`, async (t) => {
    const row = await redisRestart({ phaseMs: 2000, concurrency: 4, syncIntervalMs, onStoreError, recoveryBoundMs: 20_000 })
    t.comment(JSON.stringify(row))
    t.same(row.failures, [])
    t.equal(row.byStatus['500'], undefined)
    t.equal(row.byStatus['429'], undefined)
  })
}

t.test('200 slow readers (1 KB/s) of a 4 MB proxied response: RSS bounded (backpressure, not buffering), a healthy lane unaffected', async (t) => {
  const row = await slowReaders({ readers: 200, durationMs: 5000, bodyBytes: 4 * 1024 * 1024 })
  t.comment(JSON.stringify(row))
  t.same(row.failures, [])
})

t.test('fan-out: a store lane killed between preview and commit, the gateway SIGKILLed mid-commit and restarted on its SQLite file: each lane applies each dispatch at most once, every committed dispatch final, never a 500', async (t) => {
  const row = await fanoutKill({ phaseMs: 1000, concurrency: 4 })
  t.comment(JSON.stringify(row))
  t.same(row.failures, [])
  t.same({ lost: row.lost, duplicated: row.duplicated }, { lost: 0, duplicated: 0 })
  t.equal(row.byStatus['500'], undefined, 'no 500')
  t.ok((row.byStatus['200'] ?? 0) > 0, 'previews and commits answered')
})
