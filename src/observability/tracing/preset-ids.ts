import { RandomIdGenerator, type IdGenerator } from '@opentelemetry/sdk-trace-base'

/**
 * The SDK's id generator, except that the next span (and trace) id can be given: the gateway's SERVER span must
 * have the span id its upstream calls already sent as their parent (the request's trace context made it when the
 * first call went out), and a trace the gateway started keeps the trace id its log lines carry. `preset` is
 * consumed by the very next `startSpan`, which the caller makes at once (nothing runs in between), then `clear`s.
 */
export class PresetIds implements IdGenerator {
  #traceId: string | undefined
  #spanId: string | undefined
  readonly #random = new RandomIdGenerator()

  preset (traceId: string, spanId: string): void {
    this.#traceId = traceId
    this.#spanId = spanId
  }

  /** Only the trace id of the next root span (its span id random). */
  presetTrace (traceId: string): void {
    this.#traceId = traceId
  }

  generateTraceId (): string {
    const id = this.#traceId ?? this.#random.generateTraceId()
    this.#traceId = undefined
    return id
  }

  generateSpanId (): string {
    const id = this.#spanId ?? this.#random.generateSpanId()
    this.#spanId = undefined
    return id
  }

  /**
   * Forgets what `startSpan` did not take: the SDK asks for the span id first and the trace id only for a span
   * without a parent, so a preset trace id must not outlive the span it was meant for.
   */
  clear (): void {
    this.#traceId = undefined
    this.#spanId = undefined
  }
}
