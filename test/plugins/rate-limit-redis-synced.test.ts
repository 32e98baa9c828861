import t, { type Test } from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import rateLimit from '../../plugins/rate-limit/index.js'
import { buildPolicyApp, tokenEnv } from '../helpers/token-app.js'
import { createLimiterRegistry } from '../../src/limits/limiter-registry.js'
import { ownRedis, type OwnRedis } from '../helpers/own-redis.js'
import { SyncedWindowCounter } from '../../src/limits/synced-window-counter.js'
import { letTimePass, waitFor } from '../helpers/wait-for.js'
import { Redis } from 'ioredis'
import { RateLimiterRedis } from 'rate-limiter-flexible'

/**
 * The rate-limit policy over `rate_limit_store.sync_interval_ms: 50` (the Redis pre-count), on a Redis of the
 * test's own that it stops and starts: a store outage follows `on_store_error` and is never a 429 (D4).
 */
async function pairOn (redis: OwnRedis, onStoreError: 'open' | 'closed', t: Test) {
  const registry = createLimiterRegistry({ driver: 'redis', redis_url: redis.url, key_prefix: `lg-synced-${onStoreError}`, on_store_error: onStoreError, sync_interval_ms: 50 })
  t.teardown(() => registry.close())
  await registry.ready()
  const { app } = buildPolicyApp({ env: await tokenEnv({ limiters: registry }), envelope: 'payments', routes: [{ url: '/pay', chain: [[rateLimit, { limit: 'payments' }]] }] })
  t.teardown(() => app.close())
  const pay = (): Promise<LightMyRequestResponse> => app.inject({ url: '/pay', remoteAddress: '203.0.113.60' })
  /**
   * Waits until the registry's Redis answers (up) or not (down) twice, 25 ms apart: a command fails a moment
   * before ioredis handles the socket's close, and `inject` alone never yields to the event loop's I/O.
   */
  async function until (up: boolean): Promise<void> {
    let agreed = 0
    await waitFor(async () => {
      const answers = await registry.ping().then(() => true, () => false)
      agreed = answers === up ? agreed + 1 : 0
      return agreed >= 2
    }, { what: `the registry's Redis to answer ${up ? 'up' : 'down'} twice in a row`, intervalMs: 25 })
  }
  // The policy's pre-counting counter (the registry keeps one per limit and setting). Whether its timer's sync
  // runs during the outage or only once Redis is back depends on the machine's speed; the tests run one by hand.
  const counter = registry.counter('payments', { key: 'ip', points: 100, window_seconds: 60 }) as SyncedWindowCounter
  /** A sync while Redis is down: it fails and drops the counts not sent yet (the documented rule). */
  async function syncDuringOutage (): Promise<void> {
    await counter.sync()
  }
  /** A read older than two sync intervals is not trusted: after three, the next count asks Redis itself. */
  async function outdateReads (): Promise<void> {
    await letTimePass(3 * 50)
  }
  const admin = new Redis(redis.url, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0 })
  t.teardown(() => admin.disconnect())
  /**
   * Waits until Redis holds `count` for the test's key and the sync that sent it has its answer (a ping on the
   * registry's connection is answered after it): nothing is in flight when Redis then stops. A sync caught in
   * flight by the stop may be sent again by the client once Redis is back (ioredis resends a command that got no
   * answer), and its counts would land in the restarted Redis.
   */
  async function allSent (count: number): Promise<void> {
    await admin.connect()
    await waitFor(async () => await admin.get(`lg-synced-${onStoreError}:payments:203.0.113.60`) === String(count), { what: `Redis to hold the ${count} counts` })
    await registry.ping()
    admin.disconnect()
  }
  return { pay, until, syncDuringOutage, outdateReads, allSent }
}

const statusAndHeaders = (res: LightMyRequestResponse): [number, unknown, unknown] =>
  [res.statusCode, res.headers['x-ratelimit-limit'], res.headers['x-ratelimit-remaining']]

t.test('pre-count, on_store_error open: Redis stopped → requests pass without limit headers, never 429; counted again when it returns', async (t) => {
  const redis = await ownRedis()
  t.teardown(() => redis.stop())
  const { pay, until, syncDuringOutage, outdateReads, allSent } = await pairOn(redis, 'open', t)
  const before = []
  for (let i = 0; i < 3; i++) before.push(statusAndHeaders(await pay()))
  t.same(before, [[200, '100', '99'], [200, '100', '98'], [200, '100', '97']], 'counted while Redis runs (the first in Redis, the next two locally)')
  await allSent(3)
  await redis.stop()
  await until(false)
  await syncDuringOutage()
  const during = []
  for (let i = 0; i < 120; i++) during.push(statusAndHeaders(await pay()))
  t.same(during, Array.from({ length: 120 }, () => [200, undefined, undefined]), '120 requests (over the limit of 100) served, without headers')
  await redis.start()
  await until(true)
  await outdateReads()
  t.same(statusAndHeaders(await pay()), [200, '100', '99'], 'counted again in the restarted (empty) Redis')
})

t.test('pre-count, on_store_error closed: Redis stopped → 503, never 429; counted again when it returns', async (t) => {
  const redis = await ownRedis()
  t.teardown(() => redis.stop())
  const { pay, until, syncDuringOutage, outdateReads } = await pairOn(redis, 'closed', t)
  t.same(statusAndHeaders(await pay()), [200, '100', '99'])
  await redis.stop()
  await until(false)
  await syncDuringOutage()
  const during = await pay()
  t.same([during.statusCode, during.json()], [503, { success: false, message: 'The gateway is shutting down or a dependency is unavailable; retry shortly.' }])
  await redis.start()
  await until(true)
  await outdateReads()
  t.same(statusAndHeaders(await pay()), [200, '100', '99'])
})

t.test('the registry pre-counts route limits only (the token endpoint\'s stay exact) and flushes them on close', async (t) => {
  const redis = await ownRedis()
  t.teardown(() => redis.stop())
  const registry = createLimiterRegistry({ driver: 'redis', redis_url: redis.url, key_prefix: 'lg-registry', on_store_error: 'open', sync_interval_ms: 60_000 })
  await registry.ready()
  const limit = { key: 'ip' as const, points: 10, window_seconds: 60 }
  const counter = registry.counter('payments', limit)
  t.ok(counter instanceof SyncedWindowCounter, 'a route limit is pre-counted')
  t.ok(registry.get('payments', limit) instanceof RateLimiterRedis, 'a token-endpoint limiter is exact')
  const admin = new Redis(redis.url)
  t.teardown(() => admin.disconnect())
  const refunds = registry.counter('refunds', limit)
  await refunds.count('203.0.113.61')
  refunds.count('203.0.113.61')
  t.not(registry.counter('refunds', { ...limit, points: 11 }), refunds, 'a changed setting (a reload) gets a new counter')
  await waitFor(async () => await admin.get('lg-registry:refunds:203.0.113.61') === '2', { what: 'the replaced counter\'s local count to reach Redis' })
  t.equal(await admin.get('lg-registry:refunds:203.0.113.61'), '2', 'the replaced one was closed, its local count sent')
  await counter.count('203.0.113.61')
  counter.count('203.0.113.61')
  counter.count('203.0.113.61')
  await registry.close()
  t.equal(await admin.get('lg-registry:payments:203.0.113.61'), '3', 'close() sent the two local counts before closing the connection')
})
