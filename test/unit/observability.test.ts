import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import t from 'tap'
import { parseGatewayConfig } from '../../src/config/second-pass/load-gateway-config.js'
import { ConfigError } from '../../src/config/config-error.js'
import { adminSettings } from '../../src/observability/admin-settings.js'
import { GatewayError } from '../../src/plugin/gateway-error.js'
import { upstreamFailureOutcome } from '../../src/upstream/outcome.js'
import { unreachableError, mirroredError } from '../../src/upstream/failure.js'
import { GatewayMetrics } from '../../src/observability/metrics.js'
import { parseTraceparent, traceFromHeaders } from '../../src/observability/trace-context.js'
import { histogramCount, sample, type ParsedFamily } from '../helpers/prometheus.js'
import { gatewayFixture } from '../helpers/gateway-fixture.js'
import { repoPath } from '../helpers/paths.js'

const parse = createRequire(import.meta.url)('parse-prometheus-text-format') as (text: string) => ParsedFamily[]

t.test('parseTraceparent accepts W3C version 00 values and rejects malformed ones', async (t) => {
  t.same(parseTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'), { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', flags: '01' })
  t.same(parseTraceparent('01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-future'), { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', flags: '00' }, 'a later version may add fields')
  for (const bad of [
    undefined, '', 'garbage',
    '00-00000000000000000000000000000000-00f067aa0ba902b7-01', // zero trace id
    '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01', // zero parent id
    'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', // forbidden version
    '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01', // uppercase
    '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra', // version 00 has four fields
    '00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01', // short trace id
  ]) t.equal(parseTraceparent(bad), undefined, String(bad))
})

t.test('traceFromHeaders continues a valid trace with a new span, or starts one', async (t) => {
  const continued = traceFromHeaders({ traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00', tracestate: 'a=1' })
  t.equal(continued.traceId, '4bf92f3577b34da6a3ce929d0e0e4736')
  t.match(continued.spanId, /^[0-9a-f]{16}$/)
  t.not(continued.spanId, '00f067aa0ba902b7')
  t.equal(continued.traceparent, `00-4bf92f3577b34da6a3ce929d0e0e4736-${continued.spanId}-00`)
  t.equal(continued.tracestate, 'a=1')
  const started = traceFromHeaders({ tracestate: 'a=1' })
  t.match(started.traceparent, /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/)
  t.equal(started.tracestate, undefined, 'a tracestate without a valid traceparent is dropped')
  t.not(traceFromHeaders({}).traceId, started.traceId, 'each started trace has its own id')
})

t.test('request series render as Prometheus counters and a cumulative histogram', async (t) => {
  const metrics = new GatewayMetrics({ configVersion: () => 7, dependencies: async () => ({ database: true, redis: false }) })
  const route = metrics.route('content', 'content_list')
  route.record('GET', 200, 0.3)
  route.record('GET', 200, 4)
  route.record('GET', 429, 20)
  t.equal(metrics.route('content', 'content_list'), route, 'a route\'s series are kept')
  metrics.upstream('org_store_001', 'http_5xx', 0.2)
  metrics.rateLimited.inc('content-per-client')
  const text = await metrics.registry.metrics()
  const families = parse(text)
  const labels = { service: 'content', route: 'content_list', method: 'GET' }
  t.equal(sample(families, 'lanegate_http_requests_total', { ...labels, status: '200' }), 2)
  t.equal(sample(families, 'lanegate_http_requests_total', { ...labels, status: '429' }), 1)
  t.equal(sample(families, 'lanegate_upstream_requests_total', { upstream: 'org_store_001', outcome: 'http_5xx' }), 1)
  t.equal(sample(families, 'lanegate_rate_limited_total', { limit: 'content-per-client' }), 1)
  t.equal(sample(families, 'lanegate_config_version'), 7)
  t.equal(sample(families, 'lanegate_dependency_up', { dependency: 'database' }), 1)
  t.equal(sample(families, 'lanegate_dependency_up', { dependency: 'redis' }), 0)
  t.equal(histogramCount(text, 'lanegate_http_request_duration_seconds', { service: 'content', route: 'content_list' }), 3)
  t.match(text, 'lanegate_http_request_duration_seconds_bucket{service="content",route="content_list",le="0.0005"} 1\n')
  t.match(text, 'lanegate_http_request_duration_seconds_bucket{service="content",route="content_list",le="0.005"} 2\n')
  t.match(text, 'lanegate_http_request_duration_seconds_bucket{service="content",route="content_list",le="0.025"} 3\n')
  const sum = /lanegate_http_request_duration_seconds_sum\{service="content",route="content_list"\} (\S+)/.exec(text)?.[1]
  t.ok(Math.abs(Number(sum) - 0.0243) < 1e-12, `sum in seconds (${sum})`)
})

t.test('a long-lived answer is counted as a request but timed in lanegate_http_stream_duration_seconds', async (t) => {
  const metrics = new GatewayMetrics({ configVersion: () => 1, dependencies: async () => ({}) })
  const route = metrics.route('live', 'read')
  route.record('GET', 200, 2)
  route.record('GET', 200, 240_000, true)
  const text = await metrics.registry.metrics()
  t.equal(sample(parse(text), 'lanegate_http_requests_total', { service: 'live', route: 'read', method: 'GET', status: '200' }), 2)
  t.equal(histogramCount(text, 'lanegate_http_request_duration_seconds', { service: 'live', route: 'read' }), 1, 'request latency: the 2 ms answer only')
  t.equal(histogramCount(text, 'lanegate_http_stream_duration_seconds', { service: 'live', route: 'read' }), 1, 'the 4-minute stream')
  t.match(text, 'lanegate_http_stream_duration_seconds_bucket{service="live",route="read",le="300"} 1\n')
})

t.test('a route\'s requests are counted under their own method and status, whichever came just before', async (t) => {
  // RouteSeries keeps the last method-and-status cell: a change of either must reach another cell.
  const metrics = new GatewayMetrics({ configVersion: () => 1, dependencies: async () => ({}) })
  const route = metrics.route('proxy', 'any')
  const asked: Array<[string, number]> = [['GET', 200], ['GET', 200], ['POST', 200], ['POST', 201], ['GET', 201], ['GET', 200], ['POST', 200]]
  for (const [method, status] of asked) route.record(method, status, 1)
  const families = parse(await metrics.registry.metrics())
  const count = (method: string, status: string) => sample(families, 'lanegate_http_requests_total', { service: 'proxy', route: 'any', method, status })
  t.same([count('GET', '200'), count('POST', '200'), count('POST', '201'), count('GET', '201')], [3, 2, 1, 1])
})

t.test('admin: absent means 127.0.0.1:9464, false turns it off, a port of 0 is allowed, anything else is an error', async (t) => {
  const demo = gatewayFixture().text()
  // The demo file's folder anchors its `plugins:` paths, so it is parsed as the repository's gateway.yaml.
  const file = repoPath('gateway.yaml')
  const load = async (text: string) => (await parseGatewayConfig(text, file, { env: { LANEGATE_DATA_DIR: '/tmp' } })).config
  const without = gatewayFixture().delete('admin').text()
  t.same(adminSettings(await load(without)), { host: '127.0.0.1', port: 9464 })
  t.same(adminSettings(await load(demo)), { host: '127.0.0.1', port: 9464 })
  t.same(adminSettings((await parseGatewayConfig(demo, file, { env: { LANEGATE_ADMIN_PORT: '0' } })).config), { host: '127.0.0.1', port: 0 })
  t.equal(adminSettings(await load(gatewayFixture().set('admin', false).text())), undefined)
  for (const bad of [true, { port: 70000 }, { prot: 1 }]) {
    await t.rejects(load(gatewayFixture().set('admin', bad).text()), ConfigError, JSON.stringify(bad))
  }
})

t.test('lanegate_log_lines_dropped_total is the log destination\'s drop count at scrape time (0 without one)', async (t) => {
  let dropped = 0
  const metrics = new GatewayMetrics({ configVersion: () => 1, dependencies: async () => ({}), logLinesDropped: () => dropped })
  t.match(await metrics.registry.metrics(), '# TYPE lanegate_log_lines_dropped_total counter\nlanegate_log_lines_dropped_total 0\n')
  dropped = 1234
  t.equal(sample(parse(await metrics.registry.metrics()), 'lanegate_log_lines_dropped_total'), 1234)
  dropped = 1300
  t.equal(sample(parse(await metrics.registry.metrics()), 'lanegate_log_lines_dropped_total'), 1300)
  const without = new GatewayMetrics({ configVersion: () => 1, dependencies: async () => ({}) })
  t.equal(sample(parse(await without.registry.metrics()), 'lanegate_log_lines_dropped_total'), 0)
})

t.test('every lanegate_* metric the gateway exports has a row in the metrics table of docs/operations.md, and every row is exported', async (t) => {
  const doc = (await readFile(repoPath('docs/operations.md'), 'utf8')).split('## Metrics, readiness and tracing')[1]?.split('\n## ')[0] ?? ''
  const documented = new Set([...doc.matchAll(/^\| ([^|]+) \|/gm)].flatMap((m) => [...(m[1] as string).matchAll(/`(lanegate_[a-z_]+)`/g)].map((n) => n[1] as string)))
  const metrics = new GatewayMetrics({ configVersion: () => 1, dependencies: async () => ({}) })
  // lanegate_workers is the primary's own (server.workers > 1: cluster/cluster-metrics.ts).
  const exported = new Set([...metrics.registry.getMetricsAsArray().map((m) => m.name).filter((n) => n.startsWith('lanegate_')), 'lanegate_workers'])
  t.ok(exported.has('lanegate_log_lines_dropped_total'))
  t.same([...exported].filter((n) => !documented.has(n)).sort(), [], 'exported but not documented')
  t.same([...documented].filter((n) => !exported.has(n)).sort(), [], 'documented but not exported')
})

t.test('the Grafana dashboard queries only metrics the gateway exports', async (t) => {
  const dashboard = await readFile(repoPath('docker/grafana-dashboard.json'), 'utf8')
  const used = new Set([...dashboard.matchAll(/\b(lanegate_[a-z_]+)/g)].map((m) => (m[1] as string).replace(/_(bucket|sum|count)$/, '')))
  const metrics = new GatewayMetrics({ configVersion: () => 1, dependencies: async () => ({}) })
  const exported = new Set(metrics.registry.getMetricsAsArray().map((m) => m.name))
  t.ok(used.size >= 10, `${used.size} metrics used`)
  for (const name of used) t.ok(exported.has(name), `${name} is exported`)
  for (const panel of ['requests', 'latency', '429s by limit', 'upstream errors by store', 'tokens issued', 'reloads']) {
    t.match(dashboard.toLowerCase(), panel, `a panel for ${panel}`)
  }
})

t.test('an upstream failure is classified by what the upstream did; the caller\'s own failures are not the upstream\'s', async (t) => {
  t.equal(upstreamFailureOutcome(unreachableError('The lane software', 'timeout')), 'timeout')
  // A failed handshake or certificate check has its own outcome (issue 21): an operator tells it from a down host.
  t.equal(upstreamFailureOutcome(unreachableError('The lane software', 'tls')), 'tls')
  for (const kind of ['refused', 'reset', 'dns', 'protocol', 'ejected', 'unreachable'] as const) {
    t.equal(upstreamFailureOutcome(unreachableError('The lane software', kind)), 'unreachable', kind)
  }
  t.equal(upstreamFailureOutcome(mirroredError('The lane software', 404, '')), 'http_4xx')
  t.equal(upstreamFailureOutcome(mirroredError('The lane software', 502, '')), 'http_5xx')
  t.equal(upstreamFailureOutcome(new GatewayError('upstream_error', { message: 'The caller closed the connection.' })), undefined, 'the caller closed the connection')
  t.equal(upstreamFailureOutcome(new GatewayError('payload_too_large')), undefined)
  t.equal(upstreamFailureOutcome(new Error('x')), undefined)
})
