import t from 'tap'
import type { FastifyBaseLogger } from 'fastify'
import type { Redis } from 'ioredis'
import { createLimiterRegistry } from '../../src/limits/limiter-registry.js'
import { createTokenLimits } from '../../src/oauth/token-limits.js'
import { buildOauthConfig } from '../helpers/oauth-config.js'

const config = await buildOauthConfig()
const issuer = { ...config.issuer, token_rate_limit: { points: 2, window_seconds: 60 }, failed_auth_limit: { points: 1, window_seconds: 60 } }
const quiet = { warn () {} } as unknown as FastifyBaseLogger

t.test('with the memory store in one process the limits answer at once, without a promise', async (t) => {
  const limits = createTokenLimits(createLimiterRegistry(config.rate_limit_store), quiet)
  t.equal(limits.checkFailedAuth('203.0.113.1', issuer), undefined)
  t.equal(limits.consumeClient('content-reader', issuer), undefined)
  t.equal(limits.consumeClient('content-reader', issuer), undefined)
  t.throws(() => limits.consumeClient('content-reader', issuer), { code: 'rate_limit_exceeded', limit: 'issuer.token_rate_limit', fields: { retry_after: 60 }, headers: { 'retry-after': '60' } },
    'the third in the window: 429 at once')
  t.equal(limits.consumeClient('checkout', issuer), undefined, 'counted per client')
  await limits.recordFailedAuth('203.0.113.1', issuer)
  t.throws(() => limits.checkFailedAuth('203.0.113.1', issuer), { code: 'rate_limit_exceeded', limit: 'issuer.failed_auth_limit', fields: { retry_after: 60 } })
  t.equal(limits.checkFailedAuth('203.0.113.2', issuer), undefined, 'braked per address')
})

t.test('a reload changing a limit starts its counts afresh; one keeping it keeps them', async (t) => {
  const limits = createTokenLimits(createLimiterRegistry(config.rate_limit_store), quiet)
  limits.consumeClient('content-reader', issuer)
  limits.consumeClient('content-reader', issuer)
  t.throws(() => limits.consumeClient('content-reader', { ...issuer }), { code: 'rate_limit_exceeded' }, 'a new issuer object with the same limit: the same counts')
  t.equal(limits.consumeClient('content-reader', { ...issuer, token_rate_limit: { points: 3, window_seconds: 60 } }), undefined, 'a changed limit: counted afresh')
})

t.test('a shared store has no in-process window: its limits answer through a promise', async (t) => {
  const registry = createLimiterRegistry({ ...config.rate_limit_store, driver: 'redis', redis_url: 'redis://127.0.0.1:1' }, {} as Redis)
  t.equal(registry.localWindow?.('oauth-token-client', { key: 'client', points: 1, window_seconds: 60 }), undefined)
  t.equal(createLimiterRegistry(config.rate_limit_store).localWindow?.('oauth-token-client', { key: 'client', points: 1, window_seconds: 60 })?.points, 1)
})
