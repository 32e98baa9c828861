/** The header each `--telemetry` gateway's exports carry (`telemetry.traces.headers`): its flavour, for the sink's counts. */
export const SINK_GATEWAY_HEADER = 'x-lanegate-bench-gateway'

/** What the bench's OTLP sink received from one gateway. */
export interface SinkCount {
  /** Export requests (POSTs to /v1/traces). */
  exports: number
  bytes: number
  /** Spans in them, read off the protobuf wire format (bench/otlp-span-count.ts). */
  spans: number
  /** Exports whose body was not an ExportTraceServiceRequest the counter could read. */
  unreadable: number
}

/** The sink's counts by the gateway named in SINK_GATEWAY_HEADER. */
export type SinkCounts = Record<string, SinkCount>

/** The sink's counts so far (`GET /__bench/counts`). */
export async function askSinkCounts (sinkUrl: string): Promise<SinkCounts> {
  const response = await fetch(`${sinkUrl}/__bench/counts`)
  if (response.status !== 200) throw new Error(`the OTLP sink answered ${response.status} for its counts`)
  return await response.json() as SinkCounts
}
