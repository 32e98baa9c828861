import type { IncomingMessage } from 'node:http'
import { hostname } from 'node:os'
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags, type Span, type Tracer } from '@opentelemetry/api'
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { AlwaysOnSampler, BasicTracerProvider, BatchSpanProcessor, SamplingDecision, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace-base'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { TracesConfig } from '../../config/types.js'
import { madeTraceOf, traceOf } from '../trace-context.js'
import type { ActiveTracing, AttemptResult, AttemptSpan } from './active-tracing.js'
import { BoundedSpanProcessor, CountingExporter, SpanQueueCount } from './bounded-export.js'
import { PresetIds } from './preset-ids.js'
import { ProtobufSpanExporter } from './protobuf-exporter.js'
import { clientSpanAttributes, serverSpanAttributes } from './span-attributes.js'

/** How long one export request may take before it counts as failed (its spans dropped). */
const EXPORT_TIMEOUT_MS = 10_000
/** How often the queue is exported when it holds less than a batch. */
const EXPORT_DELAY_MS = 1_000

/**
 * Span export for one `telemetry.traces` config, with the OpenTelemetry JS SDK: a tracer provider whose spans go
 * through a bounded queue (bounded-export.ts) to the SDK's batch processor and the OTLP/HTTP exporter, exported in
 * the background. The sampling decision is made when a request's trace is first worked out (`flagsFor`), so the
 * `traceparent` sent upstream already says whether the trace is recorded; spans are then made only for sampled
 * traces (the SDK's sampler is AlwaysOn behind that decision).
 */
export class Tracing implements ActiveTracing {
  readonly #provider: BasicTracerProvider
  readonly #tracer: Tracer
  readonly #ids = new PresetIds()
  readonly #decide: (traceId: string) => string
  readonly #parentBased: boolean
  /** sample_ratio 0: only a caller's sampled flag (under parent_based) can make a trace recorded. */
  readonly #samplesNone: boolean

  constructor (readonly config: TracesConfig, onDropped: (spans: number) => void) {
    const queue = new SpanQueueCount(config.max_queue, onDropped)
    // At most two export requests in flight: with a slow collector, what waits is the bounded queue, not requests.
    const options = { url: config.endpoint, headers: { ...config.headers }, timeoutMillis: EXPORT_TIMEOUT_MS, concurrencyLimit: 2 }
    const exporter = config.protocol === 'http/json' ? new JsonExporter(options) : new ProtobufSpanExporter(options)
    const batches = new BatchSpanProcessor(new CountingExporter(exporter, queue), {
      // One more than the bound in front of it: the SDK's own never drops (uncounted) before ours.
      maxQueueSize: config.max_queue + 1,
      maxExportBatchSize: config.batch_size,
      scheduledDelayMillis: EXPORT_DELAY_MS,
      exportTimeoutMillis: EXPORT_TIMEOUT_MS,
    })
    this.#provider = new BasicTracerProvider({
      // Each process (each worker of server.workers) is its own instance.
      resource: resourceFromAttributes({ 'service.name': config.service_name, 'service.instance.id': `${hostname()}:${process.pid}` }),
      sampler: new AlwaysOnSampler(),
      idGenerator: this.#ids,
      spanProcessors: [new BoundedSpanProcessor(batches, queue)],
    })
    this.#tracer = this.#provider.getTracer('lanegate')
    this.#decide = ratioDecision(config.sample_ratio)
    this.#parentBased = config.parent_based
    this.#samplesNone = config.sample_ratio <= 0
  }

  flagsFor (traceId: string, callerFlags: string | undefined): string {
    if (callerFlags !== undefined && this.#parentBased) return callerFlags
    return this.#decide(traceId)
  }

  startAttempt (traceId: string, parentSpanId: string | undefined, upstream: string, method: string, targetUrl: string, path: string, attempt: number): AttemptSpan {
    // A root span (work outside a request) takes the trace id its traceparent carries.
    if (parentSpanId === undefined) this.#ids.presetTrace(traceId)
    const parent = parentSpanId === undefined ? ROOT_CONTEXT : trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId: parentSpanId, traceFlags: TraceFlags.SAMPLED, isRemote: false })
    const span = this.#tracer.startSpan(method, { kind: SpanKind.CLIENT, attributes: clientSpanAttributes(upstream, method, targetUrl, path, attempt) }, parent)
    this.#ids.clear()
    return new ClientAttempt(span, `00-${traceId}-${span.spanContext().spanId}-01`)
  }

  recordInternal (traceId: string, parentSpanId: string, name: string, startMs: number, endMs: number, attributes: Record<string, string | number>): void {
    const parent = trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId: parentSpanId, traceFlags: TraceFlags.SAMPLED, isRemote: false })
    this.#tracer.startSpan(name, { kind: SpanKind.INTERNAL, startTime: startMs, attributes }, parent).end(endMs)
  }

  /** The SERVER span of one answered request of a sampled trace, made at its end with its start time. */
  recordServer (request: FastifyRequest, reply: FastifyReply): void {
    if (this.#unsampledWithoutTrace(request.raw)) return
    const requestTrace = traceOf(request.raw)
    if (!requestTrace.sampled) return
    const end = performance.timeOrigin + performance.now()
    const { name, attributes } = serverSpanAttributes(request, reply)
    const parent = requestTrace.parentSpanId === undefined
      ? ROOT_CONTEXT
      : trace.setSpanContext(ROOT_CONTEXT, { traceId: requestTrace.traceId, spanId: requestTrace.parentSpanId, traceFlags: TraceFlags.SAMPLED, isRemote: true })
    // The span ids the request already used: the upstream calls named `spanId` as their parent.
    this.#ids.preset(requestTrace.traceId, requestTrace.spanId)
    const span = this.#tracer.startSpan(name, { kind: SpanKind.SERVER, startTime: end - reply.elapsedTime, attributes }, parent)
    this.#ids.clear()
    const error = attributes['error.type']
    if (reply.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR, message: String(error) })
    if (error !== undefined) span.addEvent('exception', { 'exception.type': String(error) }, end)
    span.end(end)
  }

  /**
   * Whether a request nothing has made a trace for yet can only be unsampled: then its trace (two random ids and a
   * traceparent) is not made at its end just to learn that. A caller's traceparent under parent_based may say
   * otherwise, so it is read as usual.
   */
  #unsampledWithoutTrace (req: IncomingMessage): boolean {
    return this.#samplesNone && madeTraceOf(req) === undefined && !(this.#parentBased && req.headers.traceparent !== undefined)
  }

  /** Exports what is queued (at most `timeoutMs`) and stops; spans still queued then are lost. */
  async shutdown (timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined
    await Promise.race([
      this.#provider.shutdown().catch(() => {}),
      new Promise<void>((resolve) => { timer = setTimeout(resolve, timeoutMs) }),
    ])
    clearTimeout(timer)
  }
}

/**
 * The trace flags `sample_ratio` gives a trace id, as the SDK's TraceIdRatioBasedSampler decides. At 0 and 1 its
 * answer does not depend on the id (every id the gateway decides on is valid: its own, or a caller's that
 * parseTraceparent accepted), so the id is not read on every request for nothing.
 */
export function ratioDecision (ratio: number): (traceId: string) => string {
  if (ratio <= 0) return () => '00'
  if (ratio >= 1) return () => '01'
  const sampler = new TraceIdRatioBasedSampler(ratio)
  return (traceId) => sampler.shouldSample(ROOT_CONTEXT, traceId).decision === SamplingDecision.RECORD_AND_SAMPLED ? '01' : '00'
}

/** The CLIENT span of one upstream attempt. */
class ClientAttempt implements AttemptSpan {
  #ended = false
  constructor (private readonly span: Span, readonly traceparent: string) {}

  end (result: AttemptResult): void {
    if (this.#ended) return
    this.#ended = true
    if (result.status !== undefined) this.span.setAttribute('http.response.status_code', result.status)
    const failed = result.failure !== undefined || (result.status !== undefined && result.status >= 500)
    if (failed) {
      const type = result.failure ?? String(result.status)
      this.span.setAttribute('error.type', type)
      this.span.setStatus({ code: SpanStatusCode.ERROR, message: type })
    }
    this.span.end()
  }
}
