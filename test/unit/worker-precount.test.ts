import t from 'tap'
import { MemoryWindowCounter, type CountOutcome } from '../../src/limits/request-counter.js'
import { SyncedWindowCounter, type WindowStore } from '../../src/limits/synced-window-counter.js'

/**
 * The workers' pre-count (`server.workers` > 1, memory driver, `sync_interval_ms` > 0) is the Redis pre-count with
 * the primary's MemoryWindowCounter as the store (limits/ipc-window-store.ts sends the adds over IPC; the primary
 * answers `counter.add`). Here the "primary" is a MemoryWindowCounter in this process behind an asynchronous
 * store, as IPC is: the bounds of docs/performance.md ("Scale-out", "Workers") with numbers.
 */
function primaryStore (primary: MemoryWindowCounter, state = { up: true }): WindowStore {
  const later = <T>(value: () => T): Promise<T> => new Promise((resolve, reject) => setImmediate(() => {
    if (!state.up) reject(new Error('the primary process did not answer a rate-limit sync in time'))
    else resolve(value())
  }))
  return {
    get ready () { return state.up },
    add: (key, points) => later(() => primary.add(key, points)),
    addMany: (entries) => later(() => entries.map(([key, points]) => primary.add(key, points))),
  }
}

async function admitted (outcome: CountOutcome | Promise<CountOutcome>): Promise<boolean> {
  return (await outcome).allowed
}

t.test('MemoryWindowCounter.add adds admitted counts to the window count() uses, and answers count and time left', async (t) => {
  let now = 1_000
  const counter = new MemoryWindowCounter(10, 60, () => now)
  t.same(counter.add('ip', 4), [4, 60_000], 'opens the window')
  now += 1_000
  t.same(counter.count('ip'), { allowed: true, remaining: 5, msBeforeReset: 59_000 }, 'count() sees the 4')
  t.same(counter.add('ip', 6), [11, 59_000])
  t.same(counter.count('ip'), { allowed: false, remaining: 0, msBeforeReset: 59_000 })
  now += 59_000
  t.same(counter.add('ip', 1), [1, 60_000], 'a new window')
})

t.test('two workers with no sync between admit at most N × points (199 of 200), then refuse once synced', async (t) => {
  const primary = new MemoryWindowCounter(100, 60)
  const make = (): SyncedWindowCounter => new SyncedWindowCounter({ store: primaryStore(primary), points: 100, windowSeconds: 60, syncIntervalMs: 60_000 })
  const a = make()
  const b = make()
  t.teardown(async () => { await a.close(); await b.close() })
  t.same([await admitted(a.count('ip')), await admitted(b.count('ip'))], [true, true], 'each worker\'s first request is counted in the primary (1, then 2)')
  let admittedA = 0
  let admittedB = 0
  for (let i = 0; i < 300; i++) {
    if (await admitted(a.count('ip'))) admittedA++
    if (await admitted(b.count('ip'))) admittedB++
  }
  t.same([admittedA, admittedB], [99, 98])
  t.ok(2 + admittedA + admittedB <= 2 * 100, 'within N × points')
  await a.sync()
  await b.sync()
  t.same(primary.add('ip', 0), [199, primary.add('ip', 0)[1]], 'every admitted request reached the primary')
  t.same([await admitted(a.count('ip')), await admitted(b.count('ip'))], [false, false], 'both refuse once synced')
})

t.test('a worker in exact mode (IpcCounter: primary.count) and a pre-counting one share one count', async (t) => {
  const primary = new MemoryWindowCounter(10, 60)
  const synced = new SyncedWindowCounter({ store: primaryStore(primary), points: 10, windowSeconds: 60, syncIntervalMs: 60_000 })
  t.teardown(() => synced.close())
  for (let i = 0; i < 3; i++) primary.count('ip')
  t.same((await synced.count('ip')).remaining, 6, 'starts from the exact worker\'s 3')
  t.same([synced.count('ip'), synced.count('ip')].map((o) => (o as CountOutcome).remaining), [5, 4])
  await synced.sync()
  t.same(primary.count('ip').remaining, 3, 'the exact worker sees the pre-counted ones')
})

t.test('the primary gone: the pre-count throws (on_store_error decides, never a 429) and counts again once it answers', async (t) => {
  const primary = new MemoryWindowCounter(10, 60)
  const state = { up: true }
  const synced = new SyncedWindowCounter({ store: primaryStore(primary, state), points: 10, windowSeconds: 60, syncIntervalMs: 60_000 })
  t.teardown(() => synced.close())
  await synced.count('ip')
  state.up = false
  t.throws(() => synced.count('ip'), /not connected/)
  state.up = true
  const again = await synced.count('ip')
  t.same([again.allowed, again.remaining], [true, 8], 'counts again once the primary answers')
})
