/** How one upstream attempt ended: the answer's status, or the failure kind when no answer came. */
export interface AttemptResult {
  readonly status?: number
  /** `upstream_failure` (timeout, refused, reset, …) or another error code. */
  readonly failure?: string
}

/** The CLIENT span of one upstream attempt: the `traceparent` to send names it as parent. */
export interface AttemptSpan {
  readonly traceparent: string
  /** Ends the span (once; later calls do nothing). */
  end (result: AttemptResult): void
}

/** What the request path asks of span export while it is on (`tracing.ts` implements it). */
export interface ActiveTracing {
  /**
   * The trace flags for a trace: with `parent_based`, the caller's (`callerFlags`, when it sent a valid
   * traceparent); else `sample_ratio` decides on the trace id ('01' sampled, '00' not).
   */
  flagsFor (traceId: string, callerFlags: string | undefined): string
  /**
   * A CLIENT span, child of the gateway's SERVER span `parentSpanId` (none: the root of trace `traceId`, for work
   * outside a request), for one attempt of a sampled trace.
   */
  startAttempt (traceId: string, parentSpanId: string | undefined, upstream: string, method: string, targetUrl: string, path: string, attempt: number): AttemptSpan
  /** An INTERNAL span, child of the gateway's SERVER span `parentSpanId`, for work already done (times in ms since the epoch). */
  recordInternal (traceId: string, parentSpanId: string, name: string, startMs: number, endMs: number, attributes: Record<string, string | number>): void
}

/**
 * The process's span export, or undefined while `telemetry.traces` is absent: the request path reads this one
 * variable and does nothing more when it is off. `lanegate start` runs one gateway per process; a test process
 * booting several gateways has the last one configured.
 */
let active: ActiveTracing | undefined

export function useTracing (tracing: ActiveTracing | undefined): void {
  active = tracing
}

export function activeTracing (): ActiveTracing | undefined {
  return active
}
