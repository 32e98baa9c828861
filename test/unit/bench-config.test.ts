import { readFile } from 'node:fs/promises'
import t from 'tap'
import { parse } from 'yaml'
import { HUGE_LIMIT, benchConfigText } from '../../bench/bench-config.js'
import { BENCH_CIRCUIT_BREAKER, MIRRORED_ROUTE } from '../../bench/proxy-groups-config.js'
import { catalog } from '../../src/pipeline/registry.js'
import { parseGatewayConfig } from '../../src/config/second-pass/load-gateway-config.js'
import { repoPath } from '../helpers/paths.js'

const demo = await readFile(repoPath('gateway.yaml'), 'utf8')
const LANE = 'http://127.0.0.1:45678'

interface Shape {
  server: { log_level: string, data_dir: string }
  issuer: { token_rate_limit: { points: number }, failed_auth_limit: { points: number } }
  rate_limits: Record<string, { points: number, window_seconds: number }>
  organizations: Array<{ stores?: Array<{ id: string, lane?: { base_url: string } }> }>
}

t.test('the bench config quiets logs, uses its own data dir, lifts every limit and points store 001 at the bench lane', async (t) => {
  const config = parse(benchConfigText(demo, { dataDir: '/tmp/bench-data', laneUrl: LANE })) as Shape
  t.equal(config.server.log_level, 'warn')
  t.equal(config.server.data_dir, '/tmp/bench-data')
  t.equal(config.issuer.token_rate_limit.points, HUGE_LIMIT)
  t.equal(config.issuer.failed_auth_limit.points, HUGE_LIMIT)
  for (const [name, limit] of Object.entries(config.rate_limits)) t.equal(limit.points, HUGE_LIMIT, name)
  const lanes = Object.fromEntries(config.organizations.flatMap((o) => o.stores ?? []).map((s) => [s.id, s.lane?.base_url]))
  t.equal(lanes.org_store_001, LANE)
  t.not(lanes.org_store_002, LANE)
})

t.test('the flood config limits the content route to 100 per hour and nothing else', async (t) => {
  const config = parse(benchConfigText(demo, { dataDir: '/tmp/d', laneUrl: LANE, floodPoints: 100 })) as Shape
  t.same(config.rate_limits['content-per-client'], { key: 'client', points: 100, window_seconds: 3600 })
  t.equal(config.rate_limits['exchange-per-client'].points, HUGE_LIMIT)
})

t.test('the bench config passes the gateway\'s own validation', async (t) => {
  const text = benchConfigText(demo, { dataDir: '/tmp/bench-data', laneUrl: LANE, floodPoints: 100 })
  const loaded = await parseGatewayConfig(text, 'bench.yaml', { env: {} }, catalog)
  t.equal(loaded.config.server.log_level, 'warn')
  t.equal(loaded.config.server.data_dir, '/tmp/bench-data')
})

t.test('the bench config gives the admin listener a free port (two `lanegate start` at once), or none with metrics off', async (t) => {
  const on = parse(benchConfigText(demo, { dataDir: '/tmp/d', laneUrl: LANE, workers: 2 })) as { admin: { host: string, port: number } }
  t.equal(on.admin.port, 0)
  const off = parse(benchConfigText(demo, { dataDir: '/tmp/d', laneUrl: LANE, metrics: false })) as { admin: unknown }
  t.equal(off.admin, false)
  // The console variants: the orchestrator picks the port, so it knows where its poller is to ask.
  const console = parse(benchConfigText(demo, { dataDir: '/tmp/d', laneUrl: LANE, adminPort: 45999 })) as { admin: { port: number } }
  t.equal(console.admin.port, 45999)
})

t.test('proxy-service: the demo pricing block gets the bench targets and no active probe, and still validates', async (t) => {
  const text = benchConfigText(demo, { dataDir: '/tmp/bench-data', laneUrl: LANE, proxyTargets: [LANE, 'http://127.0.0.1:45679'] })
  const upstream = (parse(text) as { services: { pricing: { upstream: Record<string, unknown> } } }).services.pricing.upstream
  t.same([upstream.targets, upstream.health], [[LANE, 'http://127.0.0.1:45679'], { passive: { failures: 3, eject_seconds: 30 } }])
  const loaded = await parseGatewayConfig(text, 'bench.yaml', { env: {} }, catalog)
  t.ok(loaded.config.services.pricing !== undefined)
})

t.test('the Redis variants: exact by default, pre-counted with redisSyncIntervalMs; both pass validation', async (t) => {
  const options = { dataDir: '/tmp/d', laneUrl: LANE, redisUrl: 'redis://127.0.0.1:6379', redisPrefix: 'lanegate-bench-x' }
  const exact = await parseGatewayConfig(benchConfigText(demo, options), 'bench.yaml', { env: {} }, catalog)
  t.same(exact.config.rate_limit_store, { driver: 'redis', redis_url: 'redis://127.0.0.1:6379', key_prefix: 'lanegate-bench-x', on_store_error: 'open', sync_interval_ms: 0 })
  const synced = await parseGatewayConfig(benchConfigText(demo, { ...options, redisSyncIntervalMs: 50 }), 'bench.yaml', { env: {} }, catalog)
  t.equal(synced.config.rate_limit_store.sync_interval_ms, 50)
})

t.test('the --telemetry configs: span export to the sink at a sampling ratio, the access log to a file; both pass validation', async (t) => {
  const traces = { endpoint: 'http://127.0.0.1:45680/v1/traces', sampleRatio: 0, headers: { 'x-lanegate-bench-gateway': 'trace-0' } }
  const traced = await parseGatewayConfig(benchConfigText(demo, { dataDir: '/tmp/d', laneUrl: LANE, traces }), 'bench.yaml', { env: {} }, catalog)
  t.same(traced.config.telemetry?.traces, {
    endpoint: 'http://127.0.0.1:45680/v1/traces',
    protocol: 'http/protobuf',
    headers: { 'x-lanegate-bench-gateway': 'trace-0' },
    sample_ratio: 0,
    parent_based: true,
    max_queue: 2048,
    batch_size: 512,
    service_name: 'lanegate',
  })
  t.equal(traced.config.access_log, undefined)
  const logged = await parseGatewayConfig(benchConfigText(demo, { dataDir: '/tmp/d', laneUrl: LANE, accessLogFile: '/tmp/d/access.log' }), 'bench.yaml', { env: {} }, catalog)
  t.same(logged.config.access_log?.sinks.map((s) => [s.type, s.path]), [['file', '/tmp/d/access.log']])
  t.equal(logged.config.access_log?.fields, undefined)
  t.equal(logged.config.telemetry, undefined)
})

t.test('proxy-service\'s breaker-split variant: two groups of the same targets, each with a breaker, a sticky 50/50 split; it validates', async (t) => {
  const targets = [LANE, 'http://127.0.0.1:45679']
  const text = benchConfigText(demo, { dataDir: '/tmp/bench-data', laneUrl: LANE, proxyTargets: targets, breakerSplit: true })
  const pricing = (parse(text) as { services: { pricing: Record<string, Record<string, Record<string, unknown>>> } }).services.pricing
  t.equal(pricing.upstream, undefined, 'the one upstream became the groups')
  t.same(Object.keys(pricing.upstreams), ['a', 'b'])
  for (const name of ['a', 'b']) {
    const group = pricing.upstreams[name] as Record<string, unknown>
    t.same([group.targets, group.circuit_breaker, group.strip_prefix], [targets, BENCH_CIRCUIT_BREAKER, true], name)
  }
  t.same(pricing.split, { weights: { a: 50, b: 50 }, sticky: 'client' })
  const loaded = await parseGatewayConfig(text, 'bench.yaml', { env: {} }, catalog)
  t.ok(loaded.config.services.pricing !== undefined)
})

t.test('proxy-mirror: a primary group, a shadow group over the slow lane, and a route of read_price\'s chain that mirrors; it validates', async (t) => {
  const mirror = { url: 'http://127.0.0.1:45680', percent: 10, maxInFlight: 16 }
  const text = benchConfigText(demo, { dataDir: '/tmp/bench-data', laneUrl: LANE, proxyTargets: [LANE], mirror })
  const pricing = (parse(text) as { services: { pricing: { upstreams: Record<string, { targets: string[] }>, routes: Record<string, Record<string, unknown>> } } }).services.pricing
  t.same(Object.fromEntries(Object.entries(pricing.upstreams).map(([name, group]) => [name, group.targets])), { primary: [LANE], shadow: [mirror.url] })
  t.same(pricing.routes[MIRRORED_ROUTE], { ...pricing.routes.read_price, path: '/mirrored/:sku', mirror: { upstream: 'shadow', percent: 10, max_in_flight: 16 } })
  t.equal(pricing.routes.read_price?.mirror, undefined, 'read_price, the baseline, is not mirrored')
  const loaded = await parseGatewayConfig(text, 'bench.yaml', { env: {} }, catalog)
  t.ok(loaded.config.services.pricing !== undefined)
})

t.test('--signing-alg: the bench config sets issuer.algorithm, and still validates; without it the demo\'s stays', async (t) => {
  const text = benchConfigText(demo, { dataDir: '/tmp/bench-data', laneUrl: LANE, signingAlgorithm: 'ES256' })
  t.equal((parse(text) as { issuer: { algorithm: string } }).issuer.algorithm, 'ES256')
  const loaded = await parseGatewayConfig(text, 'bench.yaml', { env: {} }, catalog)
  t.equal(loaded.config.issuer.algorithm, 'ES256')
  t.equal((parse(benchConfigText(demo, { dataDir: '/tmp/bench-data', laneUrl: LANE })) as { issuer: { algorithm: string } }).issuer.algorithm, 'EdDSA')
})
