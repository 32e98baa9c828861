import t from 'tap'
import { Redis } from 'ioredis'
import { randomUUID } from 'node:crypto'
import { RateLimiterRedis } from 'rate-limiter-flexible'
import { SyncedWindowCounter, windowIncrScript } from '../../src/limits/synced-window-counter.js'
import { StoreCounter, type CountOutcome } from '../../src/limits/request-counter.js'
import { redisAvailable, testRedisUrl } from '../helpers/redis-available.js'
import { ownRedis } from '../helpers/own-redis.js'
import { letTimePass, waitFor, waitForEvent } from '../helpers/wait-for.js'

/** A client as the limiter registry opens one: no offline queue, so a command while disconnected fails at once. */
async function client (url: string = testRedisUrl): Promise<Redis> {
  const redis = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 1_000, retryStrategy: (n) => Math.min(n * 50, 200) })
  redis.on('error', () => {})
  if (redis.status !== 'ready') await waitForEvent(redis, 'ready', { what: `a Redis connection to ${url}` })
  return redis
}

t.test('the script is rate-limiter-flexible\'s RateLimiterRedis script, word for word', async (t) => {
  let defined: string | undefined
  const recorder = { defineCommand: (_name: string, definition: { lua: string }) => { defined = definition.lua } }
  void new RateLimiterRedis({ storeClient: recorder, points: 1, duration: 1 })
  t.equal(defined, windowIncrScript)
})

if (!(await redisAvailable())) {
  if (process.env.LANEGATE_REQUIRE_SERVICES === '1') t.fail(`Redis is required at ${testRedisUrl} (LANEGATE_REQUIRE_SERVICES=1)`)
  else t.comment(`Redis is not reachable at ${testRedisUrl}; its tests did not run (start it with /work/shared/services/start.sh)`)
} else {
  const prefix = `lanegate-test-synced:${randomUUID()}`
  const admin = new Redis(testRedisUrl)
  t.teardown(async () => {
    const keys = await admin.keys(`${prefix}*`)
    if (keys.length > 0) await admin.del(...keys)
    admin.disconnect()
  })
  const redis = await client()
  t.teardown(() => redis.disconnect())

  /** A counter on the shared Redis whose timer never fires within a test (syncs are called by hand). */
  function counter (limit: string, points: number, windowSeconds = 60, syncIntervalMs = 60_000, now?: () => number): SyncedWindowCounter {
    const made = new SyncedWindowCounter({ client: redis, keyPrefix: `${prefix}:${limit}`, points, windowSeconds, syncIntervalMs, now })
    t.teardown(() => made.close())
    return made
  }

  /** Whether a request was admitted, counted in Redis or locally. */
  async function admitted (counted: CountOutcome | Promise<CountOutcome>): Promise<boolean> {
    return (await counted).allowed
  }

  t.test('a key\'s first request is counted in Redis; later ones locally, and reach Redis at the next sync', async (t) => {
    const c = counter('reach', 10)
    const first = c.count('k')
    t.ok(first instanceof Promise, 'the first request of a key awaits one round trip')
    const outcome = await first
    t.same([outcome.allowed, outcome.remaining], [true, 9])
    t.ok(outcome.msBeforeReset > 59_000 && outcome.msBeforeReset <= 60_000, `a fresh 60-second window (${outcome.msBeforeReset} ms)`)
    t.equal(await admin.get(`${prefix}:reach:k`), '1', 'under <key_prefix>:<limit>:<key>, as RateLimiterRedis writes it')
    const local = [c.count('k'), c.count('k'), c.count('k'), c.count('k')]
    t.same(local.map((o) => o instanceof Promise ? 'promise' : [o.allowed, o.remaining]), [[true, 8], [true, 7], [true, 6], [true, 5]], 'answered synchronously')
    t.equal(await admin.get(`${prefix}:reach:k`), '1', 'not sent yet')
    await c.sync()
    t.equal(await admin.get(`${prefix}:reach:k`), '5', 'sent at the sync')
    const ttl = await admin.pttl(`${prefix}:reach:k`)
    t.ok(ttl > 55_000 && ttl <= 60_000, 'the window the first request opened is kept')
  })

  t.test('two instances with no rate bound admit at most N × points in a window (here 199 of a bound of 200), then refuse', async (t) => {
    const a = counter('burst', 100)
    const b = counter('burst', 100)
    const firsts = [await admitted(a.count('ip')), await admitted(b.count('ip'))]
    t.same(firsts, [true, true], 'each instance\'s first request went to Redis (count 1, then 2)')
    let admittedA = 0
    let admittedB = 0
    // No sync between: each instance admits on the count it read (A: 1, B: 2) until its own view is full.
    for (let i = 0; i < 300; i++) {
      if (await admitted(a.count('ip'))) admittedA++
      if (await admitted(b.count('ip'))) admittedB++
    }
    t.same([admittedA, admittedB], [99, 98])
    const total = 2 + admittedA + admittedB
    t.equal(total, 199)
    t.ok(total <= 2 * 100, 'within the bound N × points = 200 (docs/performance.md, Scale-out)')
    await a.sync()
    await b.sync()
    t.equal(await admin.get(`${prefix}:burst:ip`), '199', 'every admitted request reached Redis')
    t.same([(await a.count('ip')).allowed, (await b.count('ip')).allowed], [false, false], 'both refuse once synced')
  })

  t.test('two instances syncing every 5 requests each: at most points + (N − 1) × 3 syncs\' worth of requests, then both refuse', async (t) => {
    // docs/performance.md's bound, points + (N − 1) × r × (3 × sync interval + a round trip), without the clock:
    // the syncs are called by hand every 5 requests per instance (as 100 requests/s with a 50 ms interval would
    // make them), so a loaded machine's timer lag cannot move the figure.
    const a = counter('paced', 100)
    const b = counter('paced', 100)
    let total = 0
    let refusedBoth = 0
    for (let i = 0; i < 400 && refusedBoth < 10; i++) {
      const [okA, okB] = [await admitted(a.count('ip')), await admitted(b.count('ip'))]
      total += Number(okA) + Number(okB)
      refusedBoth = !okA && !okB ? refusedBoth + 1 : 0
      if (i % 5 === 4) await Promise.all([a.sync(), b.sync()])
    }
    const bound = 100 + (2 - 1) * 3 * 5
    t.ok(total >= 100, `admitted ${total}: the limit is reached`)
    t.ok(total <= bound, `admitted ${total} ≤ ${bound} (without the syncs each would admit its own 100)`)
    t.equal(refusedBoth, 10, 'both instances end up refusing')
  })

  t.test('an instance in exact mode and one pre-counting share one count', async (t) => {
    const exact = new StoreCounter(new RateLimiterRedis({ storeClient: redis, keyPrefix: `${prefix}:shared`, points: 10, duration: 60 }))
    const synced = counter('shared', 10)
    for (let i = 0; i < 3; i++) await exact.count('ip')
    t.same((await synced.count('ip')).remaining, 6, 'the pre-counting instance starts from the exact one\'s 3')
    t.same([synced.count('ip'), synced.count('ip')].map((o) => (o as CountOutcome).remaining), [5, 4])
    await synced.sync()
    t.same((await exact.count('ip')).remaining, 3, 'the exact instance sees the three pre-counted ones')
    for (let i = 0; i < 3; i++) await exact.count('ip')
    const full = await exact.count('ip')
    t.same([full.allowed, full.remaining], [false, 0], 'the exact instance is full')
    t.equal((synced.count('ip') as CountOutcome).allowed, true, 'the pre-counting one admits once more on its last read (6): the documented over-admission')
    await synced.sync()
    t.equal((synced.count('ip') as CountOutcome).allowed, false, 'and refuses once synced')
  })

  t.test('a refusal carries the time left in the window Redis holds', async (t) => {
    const c = counter('reset', 2)
    await c.count('ip')
    c.count('ip')
    // Time passing in the window is the subject: 2 s, so that a fresh window (60 s left) is told from Redis's
    // (≤ 58 s left) by far more than a loaded machine's lag.
    await letTimePass(2_000)
    const refused = c.count('ip') as CountOutcome
    const ttl = await admin.pttl(`${prefix}:reset:ip`)
    t.same([refused.allowed, refused.remaining], [false, 0])
    t.ok(refused.msBeforeReset <= 58_000 && refused.msBeforeReset > 40_000, `at least 2 s into the window (${refused.msBeforeReset} ms left)`)
    t.ok(Math.abs(refused.msBeforeReset - ttl) < 1_000, `Redis's PTTL ${ttl} ms`)
  })

  t.test('a key asked less often than every two intervals is counted in Redis (exact), not on an old read', async (t) => {
    // The read growing old is the subject: the counter's clock is driven, three of the 50 ms sync intervals (the
    // rule is two) passing at once.
    let clock = Date.now()
    const c = counter('stale', 10, 60, 50, () => clock)
    await c.count('ip')
    clock += 3 * 50
    const late = c.count('ip')
    t.ok(late instanceof Promise, 'the count read 150 ms ago is older than two 50 ms intervals')
    t.same((await late).remaining, 8)
  })

  t.test('keys idle for a window are dropped', async (t) => {
    const c = counter('idle', 5, 1, 50)
    for (let i = 0; i < 50; i++) await c.count(`ip-${i}`)
    t.equal(c.size, 50)
    await waitFor(() => c.size === 0, { what: 'the 50 keys to be swept once their one-second windows ended' })
    t.equal(c.size, 0, 'swept once their one-second windows ended')
  })

  t.test('close() stops the timer and sends the counts not sent yet', async (t) => {
    const c = new SyncedWindowCounter({ client: redis, keyPrefix: `${prefix}:close`, points: 100, windowSeconds: 60, syncIntervalMs: 60_000 })
    await c.count('ip')
    for (let i = 0; i < 5; i++) c.count('ip')
    t.equal(await admin.get(`${prefix}:close:ip`), '1')
    await c.close()
    t.equal(await admin.get(`${prefix}:close:ip`), '6')
  })

  t.test('store failure: the counter throws (never a refusal) and forgets its keys; it counts again once Redis is back', async (t) => {
    const own = await ownRedis()
    t.teardown(() => own.stop())
    const ownClient = await client(own.url)
    t.teardown(() => ownClient.disconnect())
    const c = new SyncedWindowCounter({ client: ownClient, keyPrefix: 'lg-outage:l', points: 3, windowSeconds: 60, syncIntervalMs: 60_000 })
    t.teardown(() => c.close())
    await c.count('ip')
    c.count('ip')
    c.count('ip')
    t.equal((c.count('ip') as CountOutcome).allowed, false, 'full before the outage')
    await own.stop()
    await waitFor(() => ownClient.status !== 'ready', { what: 'the client to see its Redis gone' })
    t.throws(() => c.count('ip'), /not connected/, 'a store error for on_store_error to decide, not a 429')
    await c.sync()
    t.equal(c.size, 0, 'the keys are forgotten after a failed sync')
    await own.start()
    await waitFor(() => ownClient.status === 'ready', { what: 'the client to reconnect to the restarted Redis' })
    t.same((await c.count('ip')).remaining, 2, 'counted again in the restarted (empty) Redis')
  })
}
