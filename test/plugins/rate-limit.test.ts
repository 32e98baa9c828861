import t from 'tap'
import { gatewaySettings } from '../../src/config/gateway-settings.js'
import type { RateLimiterAbstract } from 'rate-limiter-flexible'
import type { CountOutcome, RequestCounter } from '../../src/limits/request-counter.js'
import auth from '../../plugins/auth/index.js'
import rateLimit from '../../plugins/rate-limit/index.js'
import { buildPolicyApp, tokenEnv, type TokenEnv } from '../helpers/token-app.js'
import { mint, serviceClaims } from '../helpers/token-mint.js'
import { createLimiterRegistry } from '../../src/limits/limiter-registry.js'
import type { LimiterRegistry } from '../../src/runtime/shared-resources.js'
import type { EnvelopeName } from '../../src/plugin/envelope-name.js'

function appWith (env: TokenEnv, envelope: EnvelopeName = 'payments') {
  const { app } = buildPolicyApp({
    env,
    envelope,
    routes: [
      { url: '/pay/a', chain: [[rateLimit, { limit: 'payments' }]] },
      { url: '/pay/b', method: 'POST', chain: [[rateLimit, { limit: 'payments' }]] },
      { url: '/small', chain: [[rateLimit, { limit: 'small' }]] },
      { url: '/guarded', chain: [[rateLimit, { limit: 'small' }], [auth, {}]] },
      { url: '/client', chain: [[auth, {}], [rateLimit, { limit: 'per_client' }]] },
      { url: '/org', chain: [[auth, {}], [rateLimit, { limit: 'per_org' }]] },
    ],
  })
  t.teardown(() => app.close())
  return app
}

const ip = '203.0.113.7'

t.test('D1: one IP counts down 99…0 across two routes sharing a limit; the 101st is a 429', async (tt) => {
  const app = appWith(await tokenEnv())
  const remaining: string[] = []
  for (let i = 0; i < 100; i++) {
    const res = await app.inject({ method: i % 2 === 0 ? 'GET' : 'POST', url: i % 2 === 0 ? '/pay/a' : '/pay/b', remoteAddress: ip })
    tt.equal(res.statusCode, 200)
    tt.equal(res.headers['x-ratelimit-limit'], '100')
    remaining.push(String(res.headers['x-ratelimit-remaining']))
  }
  tt.same(remaining, Array.from({ length: 100 }, (_, i) => String(99 - i)))

  const over = await app.inject({ url: '/pay/a', remoteAddress: ip })
  tt.equal(over.statusCode, 429)
  const retryAfter = Number(over.headers['retry-after'])
  tt.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`)
  tt.same(over.json(), { error: 'Too many requests', retry_after: retryAfter })
  tt.equal(over.headers['x-ratelimit-limit'], '100')
  tt.equal(over.headers['x-ratelimit-remaining'], '0')

  const otherLimit = await app.inject({ url: '/small', remoteAddress: ip })
  tt.equal(otherLimit.statusCode, 200, 'a route with another limit is unaffected')
  tt.equal(otherLimit.headers['x-ratelimit-limit'], '3')
  tt.equal(otherLimit.headers['x-ratelimit-remaining'], '2')
  tt.equal((await app.inject({ url: '/pay/a', remoteAddress: '203.0.113.8' })).statusCode, 200, 'another IP is unaffected')
})

t.test('the 429 body in each envelope', async (tt) => {
  for (const envelope of ['payments', 'plain', 'exchange'] as const) {
    const app = appWith(await tokenEnv(), envelope)
    for (let i = 0; i < 3; i++) await app.inject({ url: '/small', remoteAddress: ip })
    const res = await app.inject({ url: '/small', remoteAddress: ip })
    tt.equal(res.statusCode, 429, envelope)
    tt.same(res.json(), { error: 'Too many requests', retry_after: Number(res.headers['retry-after']) }, envelope)
    tt.equal(res.headers['cache-control'], 'no-store')
  }
})

t.test('D2: rotating X-Forwarded-For, X-Real-IP and Forwarded from an untrusted peer stays one bucket', async (tt) => {
  const app = appWith(await tokenEnv())
  const statuses: number[] = []
  for (let i = 0; i < 6; i++) {
    const res = await app.inject({
      url: '/small',
      remoteAddress: ip,
      headers: { 'x-forwarded-for': `198.51.100.${i}`, 'x-real-ip': `198.51.100.${i}`, forwarded: `for=198.51.100.${i}` },
    })
    statuses.push(res.statusCode)
  }
  tt.same(statuses, [200, 200, 200, 429, 429, 429])
})

t.test('D3: IPv6 addresses within one /64 share a bucket; another /64 does not', async (tt) => {
  const app = appWith(await tokenEnv())
  const statuses: number[] = []
  for (const address of ['2001:db8:1:2::1', '2001:db8:1:2:aaaa::5', '2001:0db8:0001:0002:ffff:ffff:ffff:ffff', '2001:db8:1:2::9']) {
    statuses.push((await app.inject({ url: '/small', remoteAddress: address })).statusCode)
  }
  tt.same(statuses, [200, 200, 200, 429])
  tt.equal((await app.inject({ url: '/small', remoteAddress: '2001:db8:1:3::1' })).statusCode, 200)
})

t.test('IPv4-mapped IPv6 counts as its IPv4 address', async (tt) => {
  const app = appWith(await tokenEnv())
  const statuses: number[] = []
  for (const address of ['198.51.100.20', '::ffff:198.51.100.20', '::ffff:c633:6414', '198.51.100.20']) {
    statuses.push((await app.inject({ url: '/small', remoteAddress: address })).statusCode)
  }
  tt.same(statuses, [200, 200, 200, 429])
})

t.test('rate-limit before auth: 401s carry the headers and count against the IP', async (tt) => {
  const app = appWith(await tokenEnv())
  const first = await app.inject({ url: '/guarded', remoteAddress: ip })
  tt.equal(first.statusCode, 401)
  tt.equal(first.headers['x-ratelimit-limit'], '3')
  tt.equal(first.headers['x-ratelimit-remaining'], '2')
  tt.equal(first.headers['www-authenticate'], 'Bearer realm="lanegate"')
  await app.inject({ url: '/guarded', remoteAddress: ip })
  await app.inject({ url: '/guarded', remoteAddress: ip })
  tt.equal((await app.inject({ url: '/guarded', remoteAddress: ip })).statusCode, 429)
})

t.test('client- and organization-keyed limits count per caller', async (tt) => {
  const env = await tokenEnv()
  const app = appWith(env)
  const pay = { authorization: `Bearer ${await mint(env.serviceKey, serviceClaims('svc_pay'))}` }
  const payAgain = { authorization: `Bearer ${await mint(env.serviceKey, serviceClaims('svc_pay'))}` }
  const child = { authorization: `Bearer ${await mint(env.serviceKey, serviceClaims('svc_child', 'org_child', 'commerce:payment-intents.read'))}` }
  const revokedLater = { authorization: `Bearer ${await mint(env.serviceKey, serviceClaims('svc_revoked'))}` }
  tt.same([
    (await app.inject({ url: '/client', headers: pay, remoteAddress: '192.0.2.1' })).statusCode,
    (await app.inject({ url: '/client', headers: payAgain, remoteAddress: '192.0.2.2' })).statusCode,
    (await app.inject({ url: '/client', headers: pay, remoteAddress: '192.0.2.3' })).statusCode,
    (await app.inject({ url: '/client', headers: child })).statusCode,
  ], [200, 200, 429, 200])
  tt.same([
    (await app.inject({ url: '/org', headers: pay })).statusCode,
    (await app.inject({ url: '/org', headers: child })).statusCode,
    (await app.inject({ url: '/org', headers: payAgain })).statusCode,
    (await app.inject({ url: '/org', headers: pay })).statusCode,
  ], [200, 200, 200, 429])
  tt.equal((await app.inject({ url: '/client', headers: revokedLater })).statusCode, 401, 'auth runs first: no counter for a rejected token')
})

t.test('requires() asks for auth only for client- and organization-keyed limits; check() reports unknown limits', async (tt) => {
  const env = await tokenEnv()
  const requires = rateLimit.requires as (options: { limit: string }, config?: unknown) => string[]
  tt.same(requires({ limit: 'per_client' }, gatewaySettings(env.config)), ['auth'])
  tt.same(requires({ limit: 'per_org' }, gatewaySettings(env.config)), ['auth'])
  tt.same(requires({ limit: 'payments' }, gatewaySettings(env.config)), [])
  tt.same(rateLimit.check?.({ limit: 'payments' }, gatewaySettings(env.config)), [])
  tt.same(rateLimit.check?.({ limit: 'nope' }, gatewaySettings(env.config)), [{ path: 'limit', message: 'unknown rate limit "nope": define it under rate_limits' }])
})

t.test('the registry keeps a limiter (and its counts) across reloads until its settings change', async (tt) => {
  const registry = createLimiterRegistry({ driver: 'memory', key_prefix: 'r:', on_store_error: 'open', sync_interval_ms: 0 })
  const first = registry.get('payments', { key: 'ip', points: 100, window_seconds: 60 })
  tt.equal(registry.get('payments', { key: 'ip', points: 100, window_seconds: 60 }), first)
  await first.consume('k')
  const res = await registry.get('payments', { key: 'ip', points: 100, window_seconds: 60 }).get('k')
  tt.equal(res?.consumedPoints, 1)
  const changed = registry.get('payments', { key: 'ip', points: 50, window_seconds: 60 })
  tt.not(changed, first)
  tt.equal(changed.points, 50)
  tt.not(registry.get('other', { key: 'ip', points: 50, window_seconds: 60 }), changed)
})

t.test('the registry keeps a route counter (and its counts) across reloads until its settings change', async (tt) => {
  const registry = createLimiterRegistry({ driver: 'memory', key_prefix: 'r:', on_store_error: 'open', sync_interval_ms: 0 })
  const first = registry.counter('payments', { key: 'ip', points: 100, window_seconds: 60 })
  tt.same(first.count('k'), { allowed: true, remaining: 99, msBeforeReset: 60_000 })
  const again = registry.counter('payments', { key: 'ip', points: 100, window_seconds: 60 })
  tt.equal(again, first)
  tt.equal((again.count('k') as CountOutcome).remaining, 98)
  const changed = registry.counter('payments', { key: 'ip', points: 50, window_seconds: 60 })
  tt.not(changed, first)
  tt.equal((changed.count('k') as CountOutcome).remaining, 49)
})

/** A registry whose store always fails, as a down Redis does. */
function failingRegistry (onStoreError: 'open' | 'closed'): LimiterRegistry {
  const limiter = { consume: async () => { throw new Error('store down') } } as unknown as RateLimiterAbstract
  const counter: RequestCounter = { count: async () => { throw new Error('store down') } }
  return { get: () => limiter, counter: () => counter, onStoreError }
}

t.test('D4: fail-open lets the request through without rate-limit headers', async (tt) => {
  const app = appWith(await tokenEnv({ limiters: failingRegistry('open') }))
  const res = await app.inject({ url: '/pay/a', remoteAddress: ip })
  tt.equal(res.statusCode, 200)
  tt.equal(res.headers['x-ratelimit-limit'], undefined)
  tt.equal(res.headers['x-ratelimit-remaining'], undefined)
})

t.test('D4: fail-closed answers 503, never 429', async (tt) => {
  const app = appWith(await tokenEnv({ limiters: failingRegistry('closed') }))
  const res = await app.inject({ url: '/pay/a', remoteAddress: ip })
  tt.equal(res.statusCode, 503)
  tt.same(res.json(), { success: false, message: 'The gateway is shutting down or a dependency is unavailable; retry shortly.' })
  tt.equal(res.headers['retry-after'], undefined)
  const plain = appWith(await tokenEnv({ limiters: failingRegistry('closed') }), 'plain')
  tt.same((await plain.inject({ url: '/pay/a' })).json(), { error: 'The gateway is shutting down or a dependency is unavailable; retry shortly.' })
})

t.test('D4: a Redis store that cannot be reached follows on_store_error', async (tt) => {
  for (const mode of ['open', 'closed'] as const) {
    const registry = createLimiterRegistry({ driver: 'redis', redis_url: 'redis://127.0.0.1:1', key_prefix: 'down:', on_store_error: mode, sync_interval_ms: 0 })
    tt.teardown(() => registry.close())
    const app = appWith(await tokenEnv({ limiters: registry }))
    const statuses = []
    for (let i = 0; i < 5; i++) statuses.push((await app.inject({ url: '/small', remoteAddress: ip })).statusCode)
    tt.same(statuses, Array(5).fill(mode === 'open' ? 200 : 503), mode)
  }
})
