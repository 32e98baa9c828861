/**
 * CPU time per span of the OTLP protobuf body: lanegate's encoder against the SDK's serializer it replaced, on
 * batches of SERVER spans like auth-get's (the attributes `serverSpanAttributes` gives an authenticated GET).
 * `node dist/bench/otlp-encode.js [batch sizes…]`; prints µs per span, median of rounds, and checks the bytes agree.
 */
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base'
import { SpanKind } from '@opentelemetry/api'
import { OtlpTraceEncoder } from '../src/observability/tracing/otlp-trace-encoder.js'

const ROUNDS = 15
const SPANS_PER_ROUND = 20_000

function serverSpans (count: number): ReadableSpan[] {
  const memory = new InMemorySpanExporter()
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'lanegate', 'service.instance.id': 'bench-host:12345' }),
    spanProcessors: [new SimpleSpanProcessor(memory)],
  })
  const tracer = provider.getTracer('lanegate')
  for (let i = 0; i < count; i++) {
    tracer.startSpan('GET /api/v1/items/:id', {
      kind: SpanKind.SERVER,
      attributes: {
        'http.request.method': 'GET',
        'url.path': `/api/v1/items/${1000 + i}`,
        'url.scheme': 'http',
        'http.response.status_code': 200,
        'client.address': '127.0.0.1',
        'network.protocol.version': '1.1',
        'http.route': '/api/v1/items/:id',
        'lanegate.service': 'items',
        'lanegate.route': 'items-get',
        'lanegate.client_id': 'bench-client',
        'lanegate.organization_id': 'org-1',
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
for (const size of sizes.length > 0 ? sizes : [1, 64, 512]) {
  const batch = serverSpans(size)
  const same = Buffer.from(encoder.encode(batch)).equals(ProtobufTraceSerializer.serializeRequest(batch) ?? new Uint8Array())
  const sdk = microsPerSpan((spans) => ProtobufTraceSerializer.serializeRequest(spans) ?? new Uint8Array(), batch)
  const ours = microsPerSpan((spans) => encoder.encode(spans), batch)
  console.log(`batch ${size}: SDK ${sdk.toFixed(3)} µs/span, lanegate ${ours.toFixed(3)} µs/span (${(sdk / ours).toFixed(2)}×), bytes ${same ? 'identical' : 'DIFFER'}`)
}
