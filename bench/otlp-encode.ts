/**
 * CPU time per span of the OTLP protobuf body: lanegate's encoder against the SDK's serializer it replaced, on
 * batches of SERVER spans like auth-get's (the attributes `serverSpanAttributes` gives an authenticated GET: the
 * path differs from span to span, the rest repeats), and on spans whose every value differs from the span before
 * (nothing for the encoder's repeated attributes to copy).
 * `node dist/bench/otlp-encode.js [batch sizes…]`; prints µs per span, median of rounds, and checks the bytes agree.
 */
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base'
import { SpanKind } from '@opentelemetry/api'
import { OtlpTraceEncoder } from '../src/observability/tracing/otlp-trace-encoder.js'

const ROUNDS = 15
const SPANS_PER_ROUND = 20_000

function serverSpans (count: number, allDiffer: boolean): ReadableSpan[] {
  const memory = new InMemorySpanExporter()
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'lanegate', 'service.instance.id': 'bench-host:12345' }),
    spanProcessors: [new SimpleSpanProcessor(memory)],
  })
  const tracer = provider.getTracer('lanegate')
  for (let i = 0; i < count; i++) {
    const v = allDiffer ? `-${i}` : ''
    tracer.startSpan('GET /api/v1/items/:id', {
      kind: SpanKind.SERVER,
      attributes: {
        'http.request.method': allDiffer ? ['GET', 'PUT'][i % 2] : 'GET',
        'url.path': `/api/v1/items/${1000 + i}`,
        'url.scheme': allDiffer ? ['http', 'https'][i % 2] : 'http',
        'http.response.status_code': allDiffer ? 200 + (i % 2) : 200,
        'client.address': allDiffer ? `127.0.0.${1 + (i % 200)}` : '127.0.0.1',
        'network.protocol.version': allDiffer ? ['1.1', '2'][i % 2] : '1.1',
        'http.route': `/api/v1/items/:id${v}`,
        'lanegate.service': `items${v}`,
        'lanegate.route': `items-get${v}`,
        'lanegate.client_id': `bench-client${v}`,
        'lanegate.organization_id': `org-1${v}`,
      },
    }).end()
  }
  return memory.getFinishedSpans()
}

function microsPerSpan (encode: (spans: ReadableSpan[]) => Uint8Array, batch: ReadableSpan[]): number {
  const calls = Math.max(1, Math.round(SPANS_PER_ROUND / batch.length))
  const rounds: number[] = []
  for (let round = 0; round < ROUNDS; round++) {
    const start = process.cpuUsage()
    for (let i = 0; i < calls; i++) encode(batch)
    const used = process.cpuUsage(start)
    rounds.push((used.user + used.system) / (calls * batch.length))
  }
  rounds.sort((a, b) => a - b)
  return rounds[Math.floor(rounds.length / 2)]
}

const sizes = process.argv.slice(2).map(Number)
const encoder = new OtlpTraceEncoder()
for (const allDiffer of [false, true]) {
  for (const size of sizes.length > 0 ? sizes : [1, 64, 512]) {
    const batch = serverSpans(size, allDiffer)
    const same = Buffer.from(encoder.encode(batch)).equals(ProtobufTraceSerializer.serializeRequest(batch) ?? new Uint8Array())
    const sdk = microsPerSpan((spans) => ProtobufTraceSerializer.serializeRequest(spans) ?? new Uint8Array(), batch)
    const ours = microsPerSpan((spans) => encoder.encode(spans), batch)
    const kind = allDiffer ? 'every value differs' : 'like auth-get'
    console.log(`${kind}, batch ${size}: SDK ${sdk.toFixed(3)} µs/span, lanegate ${ours.toFixed(3)} µs/span (${(sdk / ours).toFixed(2)}×), bytes ${same ? 'identical' : 'DIFFER'}`)
  }
}
