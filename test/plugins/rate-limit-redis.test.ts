import t from 'tap'
import { Redis } from 'ioredis'
import { randomUUID } from 'node:crypto'
import rateLimit from '../../plugins/rate-limit/index.js'
import { buildPolicyApp, tokenEnv } from '../helpers/token-app.js'
import { createLimiterRegistry } from '../../src/limits/limiter-registry.js'
import { redisAvailable, testRedisUrl } from '../helpers/redis-available.js'

const redisUrl = testRedisUrl

if (!(await redisAvailable())) {
  if (process.env.LANEGATE_REQUIRE_SERVICES === '1') t.fail(`Redis is required at ${redisUrl} (LANEGATE_REQUIRE_SERVICES=1)`)
  else t.plan(0, `Redis is not reachable at ${redisUrl}; start it with /work/shared/services/start.sh`)
} else {
  const prefix = `lanegate-test:${randomUUID()}:`
  t.teardown(async () => {
    const admin = new Redis(redisUrl)
    // The token endpoint's limiters sit at `<key_prefix>#…`, route limits at `<key_prefix>:…`: drop both.
    const keys = await admin.keys(`${prefix.slice(0, -1)}*`)
    if (keys.length > 0) await admin.del(...keys)
    admin.disconnect()
  })

  t.test('D5: two gateway instances over one Redis share 100 per window in total', async (tt) => {
    const store = { driver: 'redis' as const, redis_url: redisUrl, key_prefix: prefix, on_store_error: 'closed' as const, sync_interval_ms: 0 }
    const apps = []
    for (let i = 0; i < 2; i++) {
      const registry = createLimiterRegistry(store)
      tt.teardown(() => registry.close())
      await registry.ready()
      const { app } = buildPolicyApp({ env: await tokenEnv({ limiters: registry }), envelope: 'payments', routes: [{ url: '/pay', chain: [[rateLimit, { limit: 'payments' }]] }] })
      tt.teardown(() => app.close())
      apps.push(app)
    }
    const remaining: string[] = []
    for (let i = 0; i < 100; i++) {
      const res = await (apps[i % 2] as typeof apps[0]).inject({ url: '/pay', remoteAddress: '203.0.113.50' })
      tt.equal(res.statusCode, 200)
      remaining.push(String(res.headers['x-ratelimit-remaining']))
    }
    tt.same(remaining, Array.from({ length: 100 }, (_, i) => String(99 - i)))
    const admin = new Redis(redisUrl)
    tt.teardown(() => admin.disconnect())
    tt.equal(await admin.get(`${prefix}payments:203.0.113.50`), '100', 'one shared counter under <key_prefix>:<limit>:<client>')
    for (const app of apps) {
      const res = await app.inject({ url: '/pay', remoteAddress: '203.0.113.50' })
      tt.equal(res.statusCode, 429)
      tt.same(res.json(), { error: 'Too many requests', retry_after: Number(res.headers['retry-after']) })
    }
  })

  t.test('a registry given an existing client uses it and leaves it open on close', async (tt) => {
    const client = new Redis(redisUrl)
    tt.teardown(() => client.disconnect())
    const registry = createLimiterRegistry({ driver: 'redis', key_prefix: prefix, on_store_error: 'closed', sync_interval_ms: 0 }, client)
    await registry.ready()
    const limiter = registry.get('shared-client', { key: 'ip', points: 5, window_seconds: 60 })
    tt.equal((await limiter.consume('k')).remainingPoints, 4)
    await registry.close()
    tt.equal(await client.ping(), 'PONG')
  })

  t.test('a route limit and a token-endpoint limiter of the same name share no counts in Redis', async (tt) => {
    const registry = createLimiterRegistry({ driver: 'redis', redis_url: redisUrl, key_prefix: prefix, on_store_error: 'closed', sync_interval_ms: 0 })
    tt.teardown(() => registry.close())
    await registry.ready()
    const limit = { key: 'client' as const, points: 5, window_seconds: 60 }
    const route = registry.counter('oauth-token-client', limit)
    const counted = await route.count('svc_a')
    tt.same([counted.allowed, counted.remaining], [true, 4])
    tt.ok(counted.msBeforeReset > 55_000 && counted.msBeforeReset <= 60_000, 'a fresh 60-second window')
    tt.equal((await registry.get('oauth-token-client', limit).consume('svc_a')).remainingPoints, 4, 'its own count')
    const admin = new Redis(redisUrl)
    tt.teardown(() => admin.disconnect())
    tt.equal(await admin.get(`${prefix}oauth-token-client:svc_a`), '1', 'the route limit under <key_prefix>:<limit>:<key>')
    tt.equal(await admin.get(`${prefix.slice(0, -1)}#oauth-token-client:svc_a`), '1', 'the token endpoint\'s apart')
  })
}
