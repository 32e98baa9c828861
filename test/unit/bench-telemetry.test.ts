import { createRequire } from 'node:module'
import t from 'tap'
import { madeUpScenario, measuredLoad } from '../helpers/bench-load-result.js'
import { countOtlpSpans } from '../../bench/otlp-span-count.js'
import type { InstructionVariant, ScenarioResult, TelemetryOutputCheck } from '../../bench/result-types.js'
import { checkTargets } from '../../bench/targets.js'
import { accessLines, measuredRequests, telemetryProblems } from '../../bench/telemetry-outputs.js'

/** The OpenTelemetry project's protobuf code (the dev dependency the OTLP test receiver decodes with), to encode requests. */
const generated = createRequire(import.meta.url)('otlp-generated-0.57/build/src/generated/root.js') as {
  opentelemetry: { proto: { collector: { trace: { v1: { ExportTraceServiceRequest: { encode (message: object): { finish (): Uint8Array } } } } } } }
}
const { ExportTraceServiceRequest } = generated.opentelemetry.proto.collector.trace.v1

function span (name: string): object {
  return {
    traceId: Buffer.alloc(16, 1),
    spanId: Buffer.alloc(8, 2),
    name,
    kind: 2,
    startTimeUnixNano: 1_700_000_000_000_000_000,
    endTimeUnixNano: 1_700_000_000_000_500_000,
    attributes: [{ key: 'http.response.status_code', value: { intValue: 200 } }, { key: 'url.path', value: { stringValue: '/public/v1/content' } }],
    events: [{ name: 'exception', attributes: [{ key: 'exception.type', value: { stringValue: 'x' } }] }],
    status: { code: 2, message: 'upstream_error' },
  }
}

t.test('the sink counts the spans of an OTLP export request across resources and scopes, skipping every other field', async (t) => {
  const request = ExportTraceServiceRequest.encode({
    resourceSpans: [
      { resource: { attributes: [{ key: 'service.name', value: { stringValue: 'lanegate' } }] }, scopeSpans: [{ scope: { name: 'lanegate' }, spans: [span('GET /a'), span('GET /b')] }, { scope: { name: 'other' }, spans: [span('GET /c')] }] },
      { resource: { attributes: [] }, scopeSpans: [{ spans: [span('GET /d')] }], schemaUrl: 'https://opentelemetry.io/schemas/1.0.0' },
    ],
  }).finish()
  t.equal(countOtlpSpans(request), 4)
  t.equal(countOtlpSpans(ExportTraceServiceRequest.encode({ resourceSpans: [] }).finish()), 0)
})

t.test('a body that is not an OTLP protobuf request is refused, not counted', async (t) => {
  t.throws(() => countOtlpSpans(Buffer.from('{"resourceSpans":[]}')), /wire type|runs past|truncated/)
  t.throws(() => countOtlpSpans(Uint8Array.of(0x0a, 0x05, 0x12)), /runs past/)
})

const goodOutput: TelemetryOutputCheck = { tracedSpans: 2100, tracedExports: 5, tracedRequests: 1000, spansPerRequest: 2, untracedSpans: 0, accessLines: 1003, accessRequests: 1000 }

t.test('telemetry output that covers every measured request is no problem', async (t) => {
  t.same(telemetryProblems('lanegate-live', goodOutput), [])
})

t.test('too few spans, spans at sampling 0, unreadable exports or too few access lines each fail their variant', async (t) => {
  t.same(telemetryProblems('lanegate-live', { ...goodOutput, tracedSpans: 1999, untracedSpans: 3, accessLines: 999 }, 1), [
    'lanegate-live-trace-100: the OTLP sink received 1999 spans in 5 exports for 1000 measured requests (at least 2000 expected: spans were dropped or never exported)',
    'lanegate-live-trace-100: 1 exports were not OTLP protobuf the sink could read',
    'lanegate-live-trace-0: sample_ratio 0, yet the sink received 3 spans',
    'lanegate-live-access-file: the access log holds 999 lines for 1000 measured requests',
  ])
  // A variant that measured nothing put out nothing: that is no evidence either.
  t.equal(telemetryProblems('lanegate-live', { ...goodOutput, tracedRequests: 0, tracedSpans: 0, accessRequests: 0, accessLines: 0 }).length, 2)
})

t.test('an access log\'s lines are counted, and those that are not JSON with a status are told apart', async (t) => {
  t.same(accessLines('{"status":200}\n{"status":429,"route":null}\nnot json\n{"route":"x"}\n'), { lines: 4, malformed: 2 })
  t.same(accessLines(''), { lines: 0, malformed: 0 })
})

/** A scenario whose rounds measured each variant at the given server CPU per request (µs). */
function timed (id: string, rounds: Array<Record<string, number>>): ScenarioResult {
  return madeUpScenario(id, rounds.map((cpu) => Object.fromEntries(Object.entries(cpu).map(([variant, us]) => [variant, measuredLoad(us)]))))
}

t.test('the goals by server CPU per request, paired within each round, with the twin beside them', async (t) => {
  const scenario = timed('auth-get', [
    { 'lanegate-auth-get': 20, 'lanegate-auth-get-trace-100': 21, 'lanegate-auth-get-trace-0': 20.1, 'lanegate-auth-get-access-file': 22, 'lanegate-auth-get-twin': 20.4 },
    { 'lanegate-auth-get': 25, 'lanegate-auth-get-trace-100': 30, 'lanegate-auth-get-trace-0': 26, 'lanegate-auth-get-access-file': 25, 'lanegate-auth-get-twin': 25 },
    { 'lanegate-auth-get': 20, 'lanegate-auth-get-trace-100': 21.6, 'lanegate-auth-get-trace-0': 20, 'lanegate-auth-get-access-file': 21.2, 'lanegate-auth-get-twin': 19.8 },
  ])
  const twin = 'a second plain process: 1× (0.99–1.02)'
  t.same(checkTargets([scenario]).filter((c) => c.what.includes('span export') || c.what.includes('access log')), [
    { scenario: 'auth-get', what: 'span export, every trace sampled: server CPU per request ÷ the plain gateway\'s, same rounds', goal: '≤ 1.1×', measured: `1.08× (1.05–1.2); ${twin}`, met: true },
    { scenario: 'auth-get', what: 'span export on, no trace sampled: server CPU per request ÷ the plain gateway\'s, same rounds', goal: '≤ 1.01×', measured: `1.005× (1–1.04); ${twin}`, met: true },
    { scenario: 'auth-get', what: 'the access log to a file: server CPU per request ÷ the plain gateway\'s, same rounds', goal: '≤ 1.05×', measured: `1.06× (1–1.1); ${twin}`, met: false },
  ])
})

t.test('no telemetry variants, no telemetry checks', async (t) => {
  const scenario = timed('live-proxy', [{ 'lane-direct': 10, 'lanegate-live': 40 }])
  t.same(checkTargets([scenario]).filter((c) => c.what.includes('span export') || c.what.includes('access log')), [])
})

function counted (name: string, perRequest: number, netPerRequest?: number): InstructionVariant {
  return { name, role: 'peer', batches: [{ requests: 1000, instructions: perRequest * 1000 }, { requests: 1000, instructions: perRequest * 1000 }], perRequest, batchDrift: 0, ...(netPerRequest === undefined ? {} : { netPerRequest }) }
}

t.test('with --instructions, the goals by instructions per request, net of idle beside them', async (t) => {
  const scenario: ScenarioResult = {
    id: 'live-proxy',
    title: 'live-proxy',
    kind: 'instructions',
    connections: 1,
    variants: [],
    runs: [],
    skipped: [],
    instructions: {
      warmupRequests: 10_000,
      batchRequests: 1000,
      comparisons: [],
      variants: [
        counted('lanegate-live', 250_000, 240_000),
        counted('lanegate-live-trace-100', 300_000, 264_000),
        counted('lanegate-live-trace-0', 251_000, 240_000),
        counted('lanegate-live-access-file', 260_000, 250_000),
        counted('lanegate-live-twin', 250_500, 240_000),
      ],
    },
  }
  const twin = 'a second plain process: 1.002×, net of idle 1×'
  t.same(checkTargets([scenario]).filter((c) => c.scenario === 'live-proxy'), [
    { scenario: 'live-proxy', what: 'span export, every trace sampled: instructions per request ÷ the plain gateway\'s', goal: '≤ 1.1×', measured: `1.2× (300000 vs 250000), net of idle 1.1×; ${twin}`, met: false },
    { scenario: 'live-proxy', what: 'span export on, no trace sampled: instructions per request ÷ the plain gateway\'s', goal: '≤ 1.01×', measured: `1.004× (251000 vs 250000), net of idle 1×; ${twin}`, met: true },
    { scenario: 'live-proxy', what: 'the access log to a file: instructions per request ÷ the plain gateway\'s', goal: '≤ 1.05×', measured: `1.04× (260000 vs 250000), net of idle 1.042×; ${twin}`, met: true },
  ])
  t.equal(measuredRequests(scenario, 'lanegate-live-trace-100'), 2000)
  t.equal(measuredRequests(scenario, 'lanegate-live-nope'), undefined)
})
