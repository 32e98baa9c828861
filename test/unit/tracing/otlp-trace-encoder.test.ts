import { ROOT_CONTEXT, trace, type Attributes, type AttributeValue, type HrTime, type Link } from '@opentelemetry/api'
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { AlwaysOnSampler, BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base'
import fc from 'fast-check'
import t from 'tap'
import { OtlpTraceEncoder } from '../../../src/observability/tracing/otlp-trace-encoder.js'

/** Text of every kind the encoder writes differently: ASCII, other UTF-8 (2–4 bytes, emoji), lone surrogates, long. */
const text = fc.array(fc.oneof(
  fc.string({ unit: 'grapheme-ascii' }),
  fc.string({ unit: 'grapheme' }),
  fc.string({ unit: 'binary' }),
  fc.constantFrom('é', 'ü', '😀', '👩‍💻', '\ud800', '\udfff', 'x'.repeat(43), 'y'.repeat(130), 'ž'.repeat(70)),
), { maxLength: 4 }).map((parts) => parts.join(''))

const hexId = (bytes: number): fc.Arbitrary<string> => fc.uint8Array({ minLength: bytes, maxLength: bytes }).map((b) => Buffer.from(b).toString('hex'))
  .filter((id) => !/^0+$/.test(id))

/** Every number the SDK writes as int_value or double_value, at the edges of each. */
const number = fc.oneof(fc.integer(), fc.double(), fc.maxSafeInteger(), fc.constantFrom(0, -0, -1, 2 ** 32, 2 ** 53, 2 ** 62, -(2 ** 63), 2 ** 63, 2 ** 64, 0.5, NaN, Infinity, -Infinity))

const attributeValue: fc.Arbitrary<AttributeValue> = fc.oneof(
  text, number, fc.boolean(),
  fc.array(text, { maxLength: 4 }), fc.array(number, { maxLength: 4 }), fc.array(fc.boolean(), { maxLength: 4 }),
  fc.array(fc.oneof(text, fc.constant(null), fc.constant(undefined)), { maxLength: 3 }) as fc.Arbitrary<AttributeValue>,
)

const attributes: fc.Arbitrary<Attributes> = fc.dictionary(fc.oneof(text, fc.constantFrom('http.request.method', 'url.path', '7', '01')), attributeValue, { maxKeys: 6 })

/** An HrTime after 1970 (nanoseconds beyond 2^53, as every time now is), up to the fixed64's range. */
const hrTime: fc.Arbitrary<HrTime> = fc.tuple(fc.integer({ min: 0, max: 2 ** 34 }), fc.integer({ min: 0, max: 999_999_999 }))

const spanPlan = fc.record({
  resource: fc.nat(2),
  scope: fc.nat(2),
  name: text,
  kind: fc.integer({ min: 0, max: 4 }),
  attributes,
  parent: fc.option(fc.record({ traceId: hexId(16), spanId: hexId(8), isRemote: fc.boolean(), traceFlags: fc.constantFrom(0, 1) }), { nil: undefined }),
  links: fc.array(fc.record({ traceId: hexId(16), spanId: hexId(8), isRemote: fc.boolean(), traceFlags: fc.constantFrom(0, 1), attributes: fc.option(attributes, { nil: undefined }) }), { maxLength: 2 }),
  events: fc.array(fc.record({ name: text, attributes: fc.option(attributes, { nil: undefined }), time: hrTime }), { maxLength: 3 }),
  status: fc.option(fc.record({ code: fc.integer({ min: 0, max: 2 }), message: fc.option(text, { nil: undefined }) }), { nil: undefined }),
  start: hrTime,
  end: hrTime,
})

const resourcePlans = fc.array(attributes, { minLength: 3, maxLength: 3 })
const scopePlans = fc.array(fc.record({ name: text, version: fc.option(text, { nil: undefined }), schemaUrl: fc.option(text, { nil: undefined }) }), { minLength: 3, maxLength: 3 })

type SpanPlan = typeof spanPlan extends fc.Arbitrary<infer P> ? P : never

/**
 * Spans made by the SDK as lanegate makes them (a provider per resource, a tracer per scope, always sampled), in the order the
 * plans give: spans of several resources and scopes interleaved, as a batch holds them.
 */
function sdkSpans (resources: Attributes[], scopes: { name: string, version?: string, schemaUrl?: string }[], plans: SpanPlan[]): ReadableSpan[] {
  const memory = new InMemorySpanExporter()
  const providers = resources.map((attrs) => new BasicTracerProvider({ resource: resourceFromAttributes(attrs), sampler: new AlwaysOnSampler(), spanProcessors: [new SimpleSpanProcessor(memory)] }))
  for (const plan of plans) {
    const scope = scopes[plan.scope]
    const tracer = providers[plan.resource].getTracer(scope.name, scope.version, { schemaUrl: scope.schemaUrl })
    const parent = plan.parent === undefined ? ROOT_CONTEXT : trace.setSpanContext(ROOT_CONTEXT, plan.parent)
    const links: Link[] = plan.links.map(({ attributes, ...context }) => ({ context, attributes }))
    const span = tracer.startSpan(plan.name, { kind: plan.kind, attributes: plan.attributes, links, startTime: plan.start }, parent)
    for (const event of plan.events) span.addEvent(event.name, event.attributes, event.time)
    if (plan.status !== undefined) span.setStatus(plan.status)
    span.end(plan.end)
  }
  return memory.getFinishedSpans()
}

const sdkBytes = (spans: ReadableSpan[]): Buffer => Buffer.from(ProtobufTraceSerializer.serializeRequest(spans) ?? new Uint8Array())

t.test('the encoder writes the bytes of the SDK\'s protobuf serializer for span batches the SDK makes', async (t) => {
  const encoder = new OtlpTraceEncoder()
  // Runs of like spans (a plan made 1–3 times in a row), so that attributes repeat from one span to the next.
  const batch = fc.array(fc.tuple(spanPlan, fc.integer({ min: 1, max: 3 })), { maxLength: 8 }).map((runs) => runs.flatMap(([plan, times]) => Array<SpanPlan>(times).fill(plan)))
  fc.assert(fc.property(resourcePlans, scopePlans, batch, (resources, scopes, plans) => {
    const spans = sdkSpans(resources, scopes, plans)
    if (spans.length !== plans.length) throw new Error('a span was not made')
    const ours = Buffer.from(encoder.encode(spans))
    const sdk = sdkBytes(spans)
    if (!ours.equals(sdk)) throw new Error(`bytes differ:\nlanegate ${ours.toString('hex')}\nSDK      ${sdk.toString('hex')}`)
  }), { numRuns: 400 })
})

/**
 * Values the SDK's own spans never carry but its serializer has a way of writing (a span from elsewhere, an
 * attribute it did not sanitise): byte arrays, nested objects, null and undefined, a trace state, dropped counts,
 * ids that are not hex, a span without a kind. Written the SDK's way too.
 */
t.test('the encoder writes what the SDK\'s serializer writes for spans made by hand, values the SDK never makes included', async (t) => {
  const encoder = new OtlpTraceEncoder()
  const odd: fc.Arbitrary<unknown> = fc.oneof(attributeValue, fc.uint8Array({ maxLength: 140 }), fc.constant(null), fc.constant(undefined),
    fc.dictionary(text, fc.oneof(text, number, fc.constant(undefined)), { maxKeys: 3 }))
  const oddAttributes = fc.dictionary(text, odd, { maxKeys: 4 }) as fc.Arbitrary<Attributes>
  const handSpan = fc.record({
    traceId: fc.oneof(hexId(16), fc.constantFrom('4BF92F3577B34DA6A3CE929D0E0E4736', 'zz', 'abc', '')),
    spanId: hexId(8),
    traceState: fc.option(text, { nil: undefined }),
    kind: fc.option(fc.integer({ min: 0, max: 4 }), { nil: undefined }),
    attributes: oddAttributes,
    dropped: fc.tuple(fc.nat(), fc.nat(), fc.nat()),
    droppedEventAttributes: fc.option(fc.nat(300), { nil: undefined }),
    time: hrTime,
  })
  const resource = resourceFromAttributes({ 'service.name': 'lanegate' })
  const scope = { name: 'lanegate', attributes: { 'scope.kind': 'test' }, droppedAttributesCount: 2 }
  fc.assert(fc.property(fc.array(handSpan, { maxLength: 5 }), (plans) => {
    const spans = plans.map((plan) => ({
      name: 'hand-made',
      kind: plan.kind,
      spanContext: () => ({ traceId: plan.traceId, spanId: plan.spanId, traceFlags: 1, traceState: plan.traceState === undefined ? undefined : { serialize: () => plan.traceState } }),
      parentSpanContext: undefined,
      startTime: plan.time,
      endTime: plan.time,
      status: { code: 0 },
      attributes: plan.attributes,
      links: [],
      events: [{ name: 'e', time: plan.time, attributes: plan.attributes, droppedAttributesCount: plan.droppedEventAttributes }],
      duration: [0, 0],
      ended: true,
      resource,
      instrumentationScope: scope,
      droppedAttributesCount: plan.dropped[0],
      droppedEventsCount: plan.dropped[1],
      droppedLinksCount: plan.dropped[2],
    })) as unknown as ReadableSpan[]
    const ours = Buffer.from(encoder.encode(spans))
    const sdk = sdkBytes(spans)
    if (!ours.equals(sdk)) throw new Error(`bytes differ:\nlanegate ${ours.toString('hex')}\nSDK      ${sdk.toString('hex')}`)
  }), { numRuns: 300 })
})

t.test('a batch larger than the size guessed from the batches before grows the buffer and keeps its bytes', async (t) => {
  const encoder = new OtlpTraceEncoder()
  const small = sdkSpans([{}], [{ name: 's' }], [])
  t.equal(Buffer.from(encoder.encode(small)).length, 0, 'an empty batch is an empty request')
  const big = sdkSpans([{ 'service.name': 'x'.repeat(5000) }], [{ name: 's' }], Array.from({ length: 3 }, (_, i) => ({
    resource: 0, scope: 0, name: `span ${i}`, kind: 1, attributes: { long: 'é'.repeat(20_000) }, parent: undefined, links: [], events: [], status: undefined, start: [1, 0], end: [2, 0],
  })))
  t.ok(sdkBytes(big).length > 3 * 512 + 256, 'more than the first guess holds')
  t.ok(Buffer.from(encoder.encode(big)).equals(sdkBytes(big)), 'the grown buffer holds the SDK\'s bytes')
  const usual = sdkSpans([{ 'service.name': 'lanegate' }], [{ name: 'lanegate' }], Array.from({ length: 3 }, (_, i) => ({
    resource: 0, scope: 0, name: `span ${i}`, kind: 1, attributes: { 'http.route': '/x' }, parent: undefined, links: [], events: [], status: undefined, start: [1, 0], end: [2, 0],
  })))
  t.ok(Buffer.from(encoder.encode(usual)).equals(sdkBytes(usual)), 'a usual batch after it')
  t.ok(encoder.encode(usual).buffer.byteLength <= 8192, 'and the one after that is sized from the usual batch, not from the huge one')
})
