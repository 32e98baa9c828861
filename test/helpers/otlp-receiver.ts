import { once } from 'node:events'
import { createServer, type Server, type ServerResponse } from 'node:http'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'

/** One span as the receiver decoded it: ids as hex, attributes as plain values, with its resource's service.name. */
export interface ReceivedSpan {
  traceId: string
  spanId: string
  parentSpanId: string
  name: string
  /** OTLP SpanKind: 1 internal, 2 server, 3 client. */
  kind: number
  attributes: Record<string, unknown>
  events: { name: string, attributes: Record<string, unknown> }[]
  status: { code?: number, message?: string }
  service: string
}

export interface OtlpReceiver {
  /** The OTLP/HTTP traces URL (`…/v1/traces`). */
  url: string
  spans: ReceivedSpan[]
  /** Export requests received (whatever their content). */
  requests: number
  /** Until `answering(false)`, every export is answered 503 (a collector that is up but refusing). */
  answering (yes: boolean): void
  /** While holding, exports get no answer (a collector that hangs); `holding(false)` answers the held ones 503. */
  holding (yes: boolean): void
  /** Export requests held unanswered now (the exporter has not given up on them). */
  readonly held: number
  close (): Promise<void>
}

/**
 * The OpenTelemetry project's own protobuf definitions, as code generated from opentelemetry-proto: the static
 * protobufjs module @opentelemetry/otlp-transformer shipped until 0.57 (a dev dependency under its own name).
 */
const generated = createRequire(import.meta.url)('otlp-generated-0.57/build/src/generated/root.js') as {
  opentelemetry: { proto: { collector: { trace: { v1: { ExportTraceServiceRequest: { decode (data: Uint8Array): unknown, toObject (message: unknown, options: object): unknown } } } } } }
}
const ExportTraceServiceRequest = generated.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest

interface AnyValue { stringValue?: string, intValue?: string, boolValue?: boolean, doubleValue?: number }
interface KeyValue { key: string, value: AnyValue }
interface DecodedSpan { traceId: Uint8Array, spanId: Uint8Array, parentSpanId?: Uint8Array, name: string, kind: number, attributes?: KeyValue[], events?: { name: string, attributes?: KeyValue[] }[], status?: { code?: number, message?: string } }
interface DecodedRequest { resourceSpans?: { resource?: { attributes?: KeyValue[] }, scopeSpans?: { spans?: DecodedSpan[] }[] }[] }

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex')

function plain (attributes: KeyValue[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const { key, value } of attributes ?? []) {
    out[key] = value.stringValue ?? (value.intValue === undefined ? undefined : Number(value.intValue)) ?? value.boolValue ?? value.doubleValue
  }
  return out
}

/** An OTLP/HTTP receiver on a free port that decodes `application/x-protobuf` export requests. */
export async function startOtlpReceiver (): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = []
  let answering = true
  let holding = false
  const held = new Set<ServerResponse>()
  const receiver = { requests: 0 }
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      receiver.requests++
      if (holding) {
        held.add(res)
        res.on('close', () => held.delete(res))
        return
      }
      if (!answering) {
        res.writeHead(503).end()
        return
      }
      const decoded = ExportTraceServiceRequest.toObject(ExportTraceServiceRequest.decode(Buffer.concat(chunks)), { longs: String, enums: Number, defaults: false }) as DecodedRequest
      for (const resourceSpans of decoded.resourceSpans ?? []) {
        const service = String(plain(resourceSpans.resource?.attributes)['service.name'])
        for (const scope of resourceSpans.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) {
            spans.push({
              traceId: hex(span.traceId),
              spanId: hex(span.spanId),
              parentSpanId: span.parentSpanId === undefined ? '' : hex(span.parentSpanId),
              name: span.name,
              kind: span.kind,
              attributes: plain(span.attributes),
              events: (span.events ?? []).map((e) => ({ name: e.name, attributes: plain(e.attributes) })),
              status: span.status ?? {},
              service,
            })
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end()
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`,
    spans,
    get requests () { return receiver.requests },
    answering (yes) { answering = yes },
    holding (yes) {
      holding = yes
      if (!yes) for (const res of held) res.writeHead(503).end()
    },
    get held () { return held.size },
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }),
  }
}
