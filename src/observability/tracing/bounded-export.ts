import type { Context } from '@opentelemetry/api'
import { ExportResultCode, type ExportResult } from '@opentelemetry/core'
import type { ReadableSpan, Span, SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace-base'

/**
 * The queue of finished spans waiting for export, counted here so that lanegate_traces_dropped_total sees every
 * span lost: the SDK's batch processor drops past its queue without telling anyone. `pending` is the spans handed
 * on and not yet taken by an export; a span past `maxQueue` is dropped at once. An export that fails (the collector
 * down, answering 5xx, timing out) loses its spans: they are counted too.
 */
export class SpanQueueCount {
  pending = 0
  constructor (readonly maxQueue: number, private readonly onDropped: (spans: number) => void) {}

  dropped (spans: number): void {
    if (spans > 0) this.onDropped(spans)
  }
}

/** In front of the batch processor: finished spans past the queue's bound are dropped and counted. */
export class BoundedSpanProcessor implements SpanProcessor {
  constructor (private readonly inner: SpanProcessor, private readonly queue: SpanQueueCount) {}

  onStart (span: Span, parentContext: Context): void {
    this.inner.onStart(span, parentContext)
  }

  onEnd (span: ReadableSpan): void {
    if (this.queue.pending >= this.queue.maxQueue) {
      this.queue.dropped(1)
      return
    }
    this.queue.pending++
    this.inner.onEnd(span)
  }

  async forceFlush (): Promise<void> {
    await this.inner.forceFlush()
  }

  async shutdown (): Promise<void> {
    await this.inner.shutdown()
  }
}

/** Around the OTLP exporter: spans leave the queue when an export takes them; a failed export's spans are counted. */
export class CountingExporter implements SpanExporter {
  constructor (private readonly inner: SpanExporter, private readonly queue: SpanQueueCount) {}

  export (spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    this.queue.pending = Math.max(0, this.queue.pending - spans.length)
    this.inner.export(spans, (result) => {
      if (result.code !== ExportResultCode.SUCCESS) this.queue.dropped(spans.length)
      resultCallback(result)
    })
  }

  async shutdown (): Promise<void> {
    await this.inner.shutdown()
  }

  async forceFlush (): Promise<void> {
    await this.inner.forceFlush?.()
  }
}
