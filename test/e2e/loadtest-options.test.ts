import t from 'tap'
import { UsageError, parseLoadtestArgs } from '../../src/loadtest/options.js'
import { RateLimitTally } from '../../src/loadtest/rate-limit-tally.js'
import type { GatewayConfig } from '../../src/config/types.js'

t.test('parseLoadtestArgs: METHOD PATH, defaults, short options, the config used when no --url', async (t) => {
  t.same(parseLoadtestArgs(['--client', 'demo-content', '--secret', 's', 'get', '/public/v1/content?x=1']), {
    config: 'gateway.yaml',
    clientId: 'demo-content',
    clientSecret: 's',
    method: 'GET',
    path: '/public/v1/content?x=1',
    contentType: 'application/json',
    connections: 50,
    durationSeconds: 30,
    json: false,
  })
  t.same(parseLoadtestArgs(['--url', 'http://127.0.0.1:8080/', '--client', 'a', '--scope', 'x y', 'POST', '/p', '--body', 'b.json', '-c', '5', '-d', '1.5', '--json'], { LANEGATE_CLIENT_SECRET: 'env-secret' }), {
    clientId: 'a',
    clientSecret: 'env-secret',
    scope: 'x y',
    url: 'http://127.0.0.1:8080',
    method: 'POST',
    path: '/p',
    bodyFile: 'b.json',
    contentType: 'application/json',
    connections: 5,
    durationSeconds: 1.5,
    json: true,
  })
})

t.test('parseLoadtestArgs refuses what cannot run', async (t) => {
  const base = ['--client', 'a', '--secret', 's']
  t.throws(() => parseLoadtestArgs([...base, 'GET']), new UsageError('expected METHOD PATH, got "GET"'))
  t.throws(() => parseLoadtestArgs([...base, 'GET', 'public']), new UsageError('PATH must start with "/", got "public"'))
  t.throws(() => parseLoadtestArgs([...base, 'G-T', '/p']), new UsageError('"G-T" is not an HTTP method'))
  t.throws(() => parseLoadtestArgs(['--secret', 's', 'GET', '/p'], {}), new UsageError('--client is required'))
  t.throws(() => parseLoadtestArgs(['--client', 'a', 'GET', '/p'], {}), new UsageError('--secret (or LANEGATE_CLIENT_SECRET) is required'))
  t.throws(() => parseLoadtestArgs([...base, 'GET', '/p', '-c', '2.5']), new UsageError('--connections must be an integer, got "2.5"'))
  t.throws(() => parseLoadtestArgs([...base, 'GET', '/p', '-d', 'x']), new UsageError('--duration must be a positive number, got "x"'))
})

t.test('RateLimitTally groups 429s by limit and error and names the limits with that many points', async (t) => {
  const config = {
    rate_limits: {
      'content-per-client': { key: 'client', points: 600, window_seconds: 60 },
      'exchange-per-client': { key: 'client', points: 600, window_seconds: 60 },
      'payments-per-ip': { key: 'ip', points: 100, window_seconds: 60 },
    },
    issuer: { token_rate_limit: { points: 60, window_seconds: 60 } },
    services: {
      content: { prefix: '/public/v1', policies: [{ auth: {} }, { 'rate-limit': { limit: 'content-per-client' } }], routes: { content_list: [] } },
      payments: { prefix: '/api/v1/ecommerce', policies: [{ 'rate-limit': { limit: 'payments-per-ip' } }], routes: {} },
    },
  } as unknown as GatewayConfig
  const tally = new RateLimitTally(config)
  tally.record({ 'X-RateLimit-Limit': '100' }, '{"error":"Too many requests","retry_after":60}')
  tally.record({ 'x-ratelimit-limit': '600' }, '{"error":"rate_limit_exceeded","retry_after":3,"message":"Slow down."}')
  tally.record({ 'x-ratelimit-limit': '600' }, '{"error":"rate_limit_exceeded","retry_after":2,"message":"Slow down."}')
  tally.record({}, 'not json')
  t.same(tally.result(), [
    { limit: '600', error: 'rate_limit_exceeded: Slow down.', names: ['content-per-client (600/60s per client)', 'exchange-per-client (600/60s per client)'], count: 2 },
    { limit: '100', error: 'Too many requests', names: ['payments-per-ip (100/60s per ip)'], count: 1 },
    { names: [], count: 1 },
  ])
  const bare = new RateLimitTally()
  bare.record({ 'x-ratelimit-limit': '60' }, '{"error":"rate_limit_exceeded","error_description":"Too many token requests."}')
  t.same(bare.result(), [{ limit: '60', error: 'rate_limit_exceeded: Too many token requests.', names: [], count: 1 }])
})

t.test('RateLimitTally prefers the limits the service serving the path uses; the token limit for /oauth/token', async (t) => {
  const config = {
    rate_limits: {
      'content-per-client': { key: 'client', points: 600, window_seconds: 60 },
      'exchange-per-client': { key: 'client', points: 600, window_seconds: 60 },
    },
    issuer: { token_rate_limit: { points: 60, window_seconds: 60 } },
    services: {
      content: { prefix: '/public/v1', policies: [{ auth: {} }, { 'rate-limit': { limit: 'content-per-client' } }], routes: { content_list: [] } },
      live: { prefix: '/v1/stores', policies: [], routes: { read: [{ 'rate-limit': { limit: 'exchange-per-client' } }] } },
    },
  } as unknown as GatewayConfig
  const content = new RateLimitTally(config, '/public/v1/content?page=2')
  content.record({ 'x-ratelimit-limit': '600' }, '{"error":"Too many requests"}')
  t.same(content.result(), [{ limit: '600', error: 'Too many requests', names: ['content-per-client (600/60s per client)'], count: 1 }])
  const live = new RateLimitTally(config, '/v1/stores/org_store_001/live/x')
  live.record({ 'x-ratelimit-limit': '600' }, '{}')
  t.same(live.result(), [{ limit: '600', names: ['exchange-per-client (600/60s per client)'], count: 1 }])
  const token = new RateLimitTally(config, '/oauth/token')
  token.record({ 'x-ratelimit-limit': '60' }, '{}')
  t.same(token.result(), [{ limit: '60', names: ['issuer.token_rate_limit (60/60s per client)'], count: 1 }])
})
