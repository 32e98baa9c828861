import { isDeepStrictEqual } from 'node:util'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { TracesConfig } from '../../config/types.js'
import { useTracing } from './active-tracing.js'
import { Tracing } from './tracing.js'

/** How long a replaced exporter (a reload changed `telemetry.traces`) may take to send what it holds. */
const RETIRED_FLUSH_MS = 2_000

/**
 * Span export as the current config sets it: off until `telemetry.traces` is
 * applied, then a {@link Tracing} per config. A reload that changes the settings starts a new one and lets the
 * old one export what it holds in the background; one that leaves them as they were keeps it.
 */
export class SpanExport {
  #current: Tracing | undefined

  constructor (private readonly onDropped: (spans: number) => void) {}

  /** Whether spans are exported (a config with `telemetry.traces` is applied). */
  get on (): boolean {
    return this.#current !== undefined
  }

  configure (config: TracesConfig | undefined): void {
    const before = this.#current
    if (before !== undefined && isDeepStrictEqual(before.config, config)) return
    this.#current = config === undefined ? undefined : new Tracing(config, this.onDropped)
    useTracing(this.#current)
    void before?.shutdown(RETIRED_FLUSH_MS)
  }

  /** The SERVER span of one answered request (nothing while export is off). An arrow: handed on as a callback. */
  readonly record = (request: FastifyRequest, reply: FastifyReply): void => {
    this.#current?.recordServer(request, reply)
  }

  /** Stops export, sending what is queued for at most `timeoutMs` (the shutdown's bound). */
  async close (timeoutMs: number): Promise<void> {
    const current = this.#current
    this.#current = undefined
    useTracing(undefined)
    await current?.shutdown(timeoutMs)
  }
}
