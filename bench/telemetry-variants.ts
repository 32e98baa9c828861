/**
 * The `--telemetry` variants (issue 42): a subject's request on gateways of the same config plus span export or
 * the access log, named by a suffix of the subject's name (`lanegate-auth-get-trace-100`), and what the check after
 * the rounds needs to know of them.
 */

/** Spans exported for every trace (sample_ratio 1) to the bench's OTLP sink. */
export const TRACE_ALL_SUFFIX = '-trace-100'
/** Span export configured, no trace sampled (sample_ratio 0): what tracing costs a request it does not record. */
export const TRACE_NONE_SUFFIX = '-trace-0'
/** The access log to a file in the run's work folder. */
export const ACCESS_FILE_SUFFIX = '-access-file'
/**
 * The control: a second process of the subject's own config. Two processes of one config differ by a few per cent
 * in CPU per request (JIT and heap layout), so a 1 % goal means something only beside twin ÷ subject.
 */
export const TELEMETRY_TWIN_SUFFIX = '-twin'

/** The suffixes of the variants a target holds to (÷ the subject), with the most each may cost. */
export const TELEMETRY_GOALS: ReadonlyArray<{ suffix: string, what: string, most: number }> = [
  { suffix: TRACE_ALL_SUFFIX, what: 'span export, every trace sampled', most: 1.10 },
  { suffix: TRACE_NONE_SUFFIX, what: 'span export on, no trace sampled', most: 1.01 },
  { suffix: ACCESS_FILE_SUFFIX, what: 'the access log to a file', most: 1.05 },
]

/** What the check after a scenario's rounds reads (bench/telemetry-outputs.ts). */
export interface TelemetryOutputs {
  /** The subject's variant name; the telemetry variants are it plus a suffix. */
  subject: string
  /** The bench OTLP sink's URL (`GET /__bench/counts`). */
  sinkUrl: string
  /** The file the access-file gateway writes. */
  accessLogFile: string
  /** Spans one request of the subject makes when sampled: its SERVER span, and a relay's CLIENT span. */
  spansPerRequest: number
}
