import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { ROOT_CONTEXT } from '@opentelemetry/api'
import { SamplingDecision, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace-base'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import { parseGatewayConfig } from '../../../src/config/second-pass/load-gateway-config.js'
import { catalog } from '../../../src/pipeline/registry.js'
import { ConfigError } from '../../../src/config/config-error.js'
import type { TracesConfig } from '../../../src/config/types.js'
import { ratioDecision, Tracing } from '../../../src/observability/tracing/tracing.js'
import { useTracing } from '../../../src/observability/tracing/active-tracing.js'
import { issuanceStart } from '../../../src/observability/tracing/token-span.js'
import { backgroundTrace, madeTraceOf, traceFromHeaders } from '../../../src/observability/trace-context.js'
import { startOtlpReceiver } from '../../helpers/otlp-receiver.js'
import { waitFor } from '../../helpers/wait-for.js'

function traces (overrides: Partial<TracesConfig>): TracesConfig {
  return { endpoint: 'http://127.0.0.1:9/v1/traces', protocol: 'http/protobuf', headers: {}, sample_ratio: 1, parent_based: true, max_queue: 2048, batch_size: 512, service_name: 'lanegate', ...overrides }
}

/**
 * A collector answering 400 to every export: the exporter does not retry that, so each export fails at once (a port
 * nobody listens on is retried for up to the export timeout; test/e2e/tracing-dead-collector covers that case).
 */
async function refusingCollector (t: Test): Promise<string> {
  const refusing = createServer((_req, res) => { res.statusCode = 400; res.end() })
  refusing.listen(0, '127.0.0.1')
  await once(refusing, 'listening')
  t.teardown(() => new Promise<void>((resolve) => refusing.close(() => resolve())))
  return `http://127.0.0.1:${(refusing.address() as AddressInfo).port}/v1/traces`
}

const CALLER_SAMPLED = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'
const CALLER_UNSAMPLED = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00'

t.test('sampling: the caller decides with parent_based, sample_ratio decides the rest; the traceparent sent carries it', async (t) => {
  t.teardown(() => { useTracing(undefined) })
  const none = new Tracing(traces({ sample_ratio: 0 }), () => {})
  t.teardown(() => none.shutdown(1000))
  useTracing(none)
  t.match(traceFromHeaders({ traceparent: CALLER_SAMPLED }), { sampled: true, flags: '01', parentSpanId: '00f067aa0ba902b7' }, 'the caller\'s sampled flag is honoured')
  t.match(traceFromHeaders({ traceparent: CALLER_UNSAMPLED }), { sampled: false, flags: '00' }, 'and its unsampled one')
  const started = traceFromHeaders({})
  t.match(started, { sampled: false, flags: '00', parentSpanId: undefined }, 'ratio 0: a trace the gateway starts is not recorded')
  t.match(started.traceparent, /-00$/, 'and the traceparent sent upstream says so')
  t.equal(started.startAttempt('pricing', 'GET', 'http://127.0.0.1:1', '/x', 1), undefined, 'no CLIENT span for an unsampled trace')

  const all = new Tracing(traces({ sample_ratio: 1, parent_based: false }), () => {})
  t.teardown(() => all.shutdown(1000))
  useTracing(all)
  t.match(traceFromHeaders({ traceparent: CALLER_UNSAMPLED }), { sampled: true, flags: '01', traceId: '4bf92f3577b34da6a3ce929d0e0e4736' }, 'parent_based false: the ratio decides, the caller\'s trace id stays')

  useTracing(undefined)
  t.match(traceFromHeaders({}), { sampled: true, flags: '01' }, 'export off: a started trace is passed on as sampled, as before')
})

t.test('sample_ratio 0: a request nothing traced ends without a trace made; a caller\'s sampled traceparent still gets its SERVER span', async (t) => {
  let dropped = 0
  // Every span recorded is counted as dropped once the collector refuses its export.
  const none = new Tracing(traces({ endpoint: await refusingCollector(t), sample_ratio: 0, max_queue: 1, batch_size: 1 }), (n) => { dropped += n })
  t.teardown(() => none.shutdown(100))
  const answered = (headers: Record<string, string>) => {
    const raw = { headers, httpVersion: '1.1' }
    const request = { gw: null, method: 'GET', url: '/x', protocol: 'http', ip: '127.0.0.1', raw }
    none.recordServer(request as never, { statusCode: 200, elapsedTime: 1, getHeader: () => undefined } as never)
    return raw
  }
  t.equal(madeTraceOf(answered({}) as never), undefined, 'no traceparent: no ids drawn, no trace made')
  t.equal(madeTraceOf(answered({ traceparent: CALLER_UNSAMPLED }) as never)?.sampled, false, 'a caller\'s traceparent is read: unsampled')
  for (let i = 0; i < 3; i++) t.equal(madeTraceOf(answered({ traceparent: CALLER_SAMPLED }) as never)?.sampled, true, 'the caller\'s sampled flag wins')
  await waitFor(() => dropped === 3, { what: 'the three sampled requests\' SERVER spans, refused by the collector' })
  t.equal(dropped, 3, 'the sampled requests were recorded, and only they')
})

t.test('sample_ratio decides a trace id as the SDK\'s ratio sampler does, at 0 and 1 without reading the id', async (t) => {
  const ids = Array.from({ length: 400 }, () => randomBytes(16).toString('hex'))
  for (const ratio of [0, 0.25, 0.5, 1]) {
    const sdk = new TraceIdRatioBasedSampler(ratio)
    const expected = ids.map((id) => sdk.shouldSample(ROOT_CONTEXT, id).decision === SamplingDecision.RECORD_AND_SAMPLED ? '01' : '00')
    t.same(ids.map(ratioDecision(ratio)), expected, `ratio ${ratio}`)
  }
  // The ids a ratio between 0 and 1 splits: neither all in nor all out (400 ids, ratio 0.5).
  t.ok(new Set(ids.map(ratioDecision(0.5))).size === 2)
})

t.test('a collector refusing every export: spans past max_queue are dropped at once and a failed export\'s spans are counted; nothing waits', async (t) => {
  let dropped = 0
  const tracing = new Tracing(traces({ endpoint: await refusingCollector(t), max_queue: 10, batch_size: 5 }), (n) => { dropped += n })
  const started = performance.now()
  for (let i = 0; i < 50; i++) tracing.startAttempt('4bf92f3577b34da6a3ce929d0e0e4736', '00f067aa0ba902b7', 'pricing', 'GET', 'http://127.0.0.1:1', '/x', 1).end({ status: 200 })
  t.ok(performance.now() - started < 5_000, 'ending 50 spans does not wait for the collector')
  // The queue holds 10; the batch processor has taken batches of 5 off it for the exporter (at most 2 in flight).
  t.ok(dropped >= 50 - 10 - 2 * 5 - 5, `${dropped} dropped at once past the queue`)
  await waitFor(() => dropped === 50, { what: 'the queued spans counted once their exports failed' })
  await tracing.shutdown(1000)
  t.equal(dropped, 50, 'every span is accounted for: none exported, all counted')
})

t.test('http/json: spans reach the collector as OTLP JSON', async (t) => {
  let body = ''
  const server = createServer((req, res) => {
    req.on('data', (c: Buffer) => { body += c.toString() })
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'))
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
  const tracing = new Tracing(traces({ endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`, protocol: 'http/json', service_name: 'edge-1' }), () => {})
  tracing.startAttempt('4bf92f3577b34da6a3ce929d0e0e4736', '00f067aa0ba902b7', 'pricing', 'GET', 'http://user:pw@10.0.0.1:8080/base/', '/prices/1?token=abc', 2).end({ failure: 'timeout' })
  await tracing.shutdown(10_000)
  const sent = JSON.parse(body) as { resourceSpans: { resource: { attributes: { key: string, value: { stringValue?: string } }[] }, scopeSpans: { spans: { traceId: string, parentSpanId: string, kind: number, attributes: { key: string, value: Record<string, unknown> }[], status: { code: number } }[] }[] }[] }
  const resource = sent.resourceSpans[0]?.resource.attributes.find((a) => a.key === 'service.name')
  t.equal(resource?.value.stringValue, 'edge-1')
  const span = sent.resourceSpans[0]?.scopeSpans[0]?.spans[0]
  t.match(span, { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', parentSpanId: '00f067aa0ba902b7', kind: 3, status: { code: 2 } })
  const attributes = Object.fromEntries((span?.attributes ?? []).map((a) => [a.key, Object.values(a.value)[0]]))
  t.same(attributes, {
    'http.request.method': 'GET',
    'server.address': '10.0.0.1',
    'server.port': 8080,
    'url.full': 'http://10.0.0.1:8080/base/prices/1',
    'lanegate.upstream': 'pricing',
    'http.request.resend_count': 1,
    'error.type': 'timeout',
  }, 'no user info, no query in url.full')
})

t.test('telemetry.traces is validated at load, at its YAML path', async (t) => {
  const base = 'issuer:\n  issuer: http://localhost:8080\nscopes:\n  a:read: { description: A }\n'
  const problems = async (text: string): Promise<unknown> => parseGatewayConfig(`${base}${text}`, 'g.yaml', { env: {} }, catalog).then(() => [], (e: unknown) => e instanceof ConfigError ? e.problems.map((p) => ({ ...p })) : Promise.reject(e))
  t.same(await problems('telemetry:\n  traces: { endpoint: "grpc://x:4317", sample_ratio: 2 }\n'), [
    { path: 'telemetry.traces.endpoint', line: 6, message: 'must match pattern "^https?://"' },
    { path: 'telemetry.traces.sample_ratio', line: 6, message: 'must be <= 1' },
  ])
  t.same(await problems('telemetry:\n  traces: { endpoint: "http://x:4318/v1/traces", max_queue: 10, batch_size: 20 }\n'), [
    { path: 'telemetry.traces.batch_size', line: 6, message: 'must be at most max_queue (10)' },
  ])
  const { config } = await parseGatewayConfig(`${base}telemetry:\n  traces: { endpoint: "http://x:4318/v1/traces" }\n`, 'g.yaml', { env: {} }, catalog)
  t.same(config.telemetry, { traces: traces({ endpoint: 'http://x:4318/v1/traces' }) }, 'the defaults')
})

t.test('the receiver helper decodes what the SDK\'s protobuf exporter sends', async (t) => {
  const receiver = await startOtlpReceiver()
  t.teardown(() => receiver.close())
  const tracing = new Tracing(traces({ endpoint: receiver.url }), () => {})
  tracing.startAttempt('4bf92f3577b34da6a3ce929d0e0e4736', '00f067aa0ba902b7', 'pricing', 'PUT', 'http://127.0.0.1:9301', '/prices/1', 1).end({ status: 204 })
  await tracing.shutdown(10_000)
  t.match(receiver.spans, [{ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', parentSpanId: '00f067aa0ba902b7', name: 'PUT', kind: 3, service: 'lanegate', attributes: { 'http.response.status_code': 204 } }])
})

t.test('a resumed fan-out delivery (no request): its attempts are root CLIENT spans of one trace, whose ids the traceparent sent carries', async (t) => {
  const receiver = await startOtlpReceiver()
  t.teardown(() => receiver.close())
  const tracing = new Tracing(traces({ endpoint: receiver.url, batch_size: 1 }), () => {})
  useTracing(tracing)
  t.teardown(async () => { useTracing(undefined); await tracing.shutdown(1000) })
  const run = backgroundTrace(undefined)
  const traceId = run.traceparent.split('-')[1]
  const attempts = [1, 2].map(() => run.startAttempt('org_store_001', 'POST', 'http://127.0.0.1:1', '/fanout/price-change/apply', 1))
  for (const attempt of attempts) attempt?.end({ status: 200 })
  await waitFor(() => receiver.spans.length === 2, { what: 'both attempts exported' })
  t.same(receiver.spans.map((s) => [s.traceId, s.parentSpanId, s.kind]), [[traceId, '', 3], [traceId, '', 3]], 'root CLIENT spans of the run\'s trace')
  t.same(attempts.map((a) => a?.traceparent).sort(), receiver.spans.map((s) => `00-${traceId}-${s.spanId}-01`).sort(), 'each attempt sends its own span as parent')

  useTracing(undefined)
  const off = backgroundTrace(undefined)
  t.match(off.traceparent, /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/, 'export off: a traceparent is still sent')
  t.equal(off.startAttempt('org_store_001', 'POST', 'http://127.0.0.1:1', '/x', 1), undefined, 'and no span made')
})

t.test('the token endpoint\'s span clock: no clock read while span export is off, the time since the epoch while on', async (t) => {
  const now = performance.now
  let reads = 0
  performance.now = () => { reads++; return now.call(performance) }
  t.teardown(() => { performance.now = now; useTracing(undefined) })
  useTracing(undefined)
  t.equal(issuanceStart(), undefined)
  t.equal(reads, 0, 'off: nothing read')
  const tracing = new Tracing(traces({}), () => {})
  t.teardown(() => tracing.shutdown(1000))
  useTracing(tracing)
  const started = issuanceStart() ?? 0
  t.ok(Math.abs(started - Date.now()) < 60_000, 'on: ms since the epoch')
})
