import t from 'tap'
import { mergeSamples, quantileMs, SampleRing, type Sample } from '../../src/console/samples.js'
import { redactedJson, secretsOf } from '../../src/secrets/redact.js'
import { GatewayMetrics } from '../../src/observability/metrics.js'
import type { GatewayConfig } from '../../src/config/types.js'

const BOUNDS = [0.001, 0.01, 0.1]

t.test('quantileMs interpolates within the bucket that holds the rank, in milliseconds', async (t) => {
  t.equal(quantileMs([0, 0, 0, 0], BOUNDS, 0.5), undefined, 'no observation')
  t.equal(quantileMs([10, 0, 0, 0], BOUNDS, 0.5), 0.5, 'half way into (0, 1 ms]')
  t.equal(quantileMs([50, 50, 0, 0], BOUNDS, 0.99), 9.82, 'p99 in (1, 10 ms]')
  t.equal(quantileMs([0, 0, 0, 4], BOUNDS, 0.5), 100, 'past the last bound reads as it')
})

t.test('mergeSamples adds the samples of one second from several processes, oldest first', async (t) => {
  const a: Sample = { t: 2, requests: 3, status: [0, 2, 0, 1, 0], latency: [1, 2, 0, 0], limited: { x: 1 }, upstreams: { lane: { calls: 2, errors: 1, latency: [0, 2, 0, 0] } }, tokens: 1 }
  const b: Sample = { t: 2, requests: 1, status: [0, 0, 0, 0, 1], latency: [0, 0, 1, 0], limited: { x: 2, y: 1 }, upstreams: { lane: { calls: 1, errors: 1, latency: [0, 0, 1, 0] } }, tokens: 0 }
  const c: Sample = { ...b, t: 1 }
  t.same(mergeSamples([[a], [b, c]]), [
    c,
    { t: 2, requests: 4, status: [0, 2, 0, 1, 1], latency: [1, 2, 1, 0], limited: { x: 3, y: 1 }, upstreams: { lane: { calls: 3, errors: 2, latency: [0, 2, 1, 0] } }, tokens: 1 },
  ])
})

t.test('the ring samples what changed in the metric cells each second, and nothing before it started', async (t) => {
  let now = 1_000_000
  const metrics = new GatewayMetrics({ configVersion: () => 1, dependencies: async () => ({}) })
  metrics.route('payments', 'x').record('GET', 200, 2)
  const ring = new SampleRing(metrics, () => now)
  t.teardown(() => ring.stop())
  const route = metrics.route('payments', 'x')
  route.record('GET', 201, 0.4)
  route.record('GET', 429, 0.4)
  metrics.rateLimited.inc('payments-per-ip')
  metrics.upstream('org_store_001', 'unreachable', 0.003)
  metrics.tokensIssued.inc('demo-status')
  now += 1000
  const first = ring.take()
  t.match(first, { t: 1001, requests: 2, status: [0, 1, 0, 1, 0], limited: { 'payments-per-ip': 1 }, upstreams: { org_store_001: { calls: 1, errors: 1 } }, tokens: 1 })
  t.equal(first.latency.reduce((a, b) => a + b, 0), 2, 'two latencies, not the one before the ring')
  now += 1000
  t.match(ring.take(), { t: 1002, requests: 0, limited: {}, upstreams: {}, tokens: 0 })
  t.same(ring.since(0).map((s) => s.t), [1001, 1002])
  t.same(ring.since(1001).map((s) => s.t), [1002])
  now += 901_000
  t.same(ring.since(0), [], 'older than 15 minutes: gone')
})

t.test('redactedJson removes every secret of the config, and URL user-info', async (t) => {
  const config = {
    service_accounts: [{ client_id: 'a', secrets: [{ hash: '$scrypt$ln=15,r=8,p=1$abc$def' }] }],
    storage: { postgres_url: 'postgres://u:pw@db/x' },
    services: { pricing: { upstream: { credential: 'Bearer s3cr3t-value' }, policies: [{ headers: { set: { 'X-Api-Key': 'key-123456' } } }] } },
    rate_limits: { l: { key: 'organization' } },
  } as unknown as GatewayConfig
  const secrets = secretsOf(config, ['admin-token-0123456789'])
  const text = redactedJson({ a: config, note: 'admin-token-0123456789', url: 'http://user:pass@127.0.0.1:9/x' }, secrets)
  for (const secret of ['$scrypt$', 's3cr3t-value', 'key-123456', 'admin-token-0123456789', 'u:pw@', 'user:pass@']) t.equal(text.includes(secret), false, secret)
  t.equal(text.includes('"key":"organization"'), true, 'ordinary values stay')
  t.equal(text.includes('http://127.0.0.1:9/x'), true)
})

t.test('redaction takes a secret by its key: a secret created today leaves today\'s timestamps and header names alone', async (t) => {
  const today = new Date().toISOString().slice(0, 10)
  const config = {
    service_accounts: [{
      client_id: 'demo-checkout',
      secrets: [{ created: today, hash: '$scrypt$ln=15,r=8,p=1$c2FsdA$aGFzaC1vZi1zZWNyZXQ' }],
      api_keys: [{ hash: '$scrypt$ln=15,r=8,p=1$a2V5$aGFzaC1vZi1rZXk', created: today }],
    }],
    admin: { auth: { token_env: 'LANEGATE_ADMIN_TOKEN' } },
    services: { pricing: { policies: [{ 'api-key': { header: 'X-Api-Key', bearer: false } }, { headers: { request: { set: { 'X-Auth-Token': 'tok-abcdef-123', 'X-Trace-Mode': 'verbose' } } } }] } },
  } as unknown as GatewayConfig
  const secrets = secretsOf(config)
  t.same(secrets, ['$scrypt$ln=15,r=8,p=1$c2FsdA$aGFzaC1vZi1zZWNyZXQ', '$scrypt$ln=15,r=8,p=1$a2V5$aGFzaC1vZi1rZXk', 'tok-abcdef-123'], 'the hashes and the token header\'s value, nothing else')
  const answer = {
    loaded_at: `${today}T05:24:26.713Z`,
    reloads: [{ at: `${today}T05:25:00.000Z`, outcome: 'loaded' }],
    chain: 'api-key(header X-Api-Key) → headers(X-Trace-Mode)',
    env: 'LANEGATE_ADMIN_TOKEN',
    leaked: 'hash $scrypt$ln=15,r=8,p=1$c2FsdA$aGFzaC1vZi1zZWNyZXQ and tok-abcdef-123',
  }
  t.same(JSON.parse(redactedJson(answer, secrets)), { ...answer, leaked: 'hash [redacted] and [redacted]' })
})
