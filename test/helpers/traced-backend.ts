import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { context, defaultTextMapGetter, defaultTextMapSetter, ROOT_CONTEXT, SpanKind, trace, type Span, type Tracer } from '@opentelemetry/api'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'

const propagator = new W3CTraceContextPropagator()

/** A tracer of the OpenTelemetry SDK for `service`, exporting each span at once to `endpoint` (OTLP/HTTP protobuf). */
export function sdkTracer (service: string, endpoint: string): { tracer: Tracer, shutdown: () => Promise<void> } {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': service }),
    spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter({ url: endpoint }))],
  })
  return { tracer: provider.getTracer(service), shutdown: () => provider.shutdown() }
}

/** The `traceparent` (and `tracestate`) that name `span` as parent, as a caller instrumented with the SDK sends them. */
export function traceHeaders (span: Span): Record<string, string> {
  const headers: Record<string, string> = {}
  propagator.inject(trace.setSpan(context.active(), span), headers, defaultTextMapSetter)
  return headers
}

/**
 * An HTTP backend instrumented with the OpenTelemetry SDK: each request is a SERVER span, child of the
 * `traceparent` it came with, exported to `endpoint`. Answers every request `{"ok":true}`.
 */
export async function startTracedBackend (service: string, endpoint: string): Promise<{ url: string, close: () => Promise<void> }> {
  const { tracer, shutdown } = sdkTracer(service, endpoint)
  const server: Server = createServer((req, res) => {
    const parent = propagator.extract(ROOT_CONTEXT, req.headers, defaultTextMapGetter)
    const span = tracer.startSpan(`${req.method ?? 'GET'} /prices/:sku`, { kind: SpanKind.SERVER, attributes: { 'http.request.method': req.method ?? 'GET' } }, parent)
    req.resume()
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}')
      span.end()
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      await new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) })
      await shutdown()
    },
  }
}
