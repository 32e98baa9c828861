import { randomFillSync } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import { activeTracing, type AttemptSpan } from './tracing/active-tracing.js'

/** W3C Trace Context `traceparent`, version 00: version-traceid-parentid-flags, lowercase hex. */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/
const ZERO_TRACE = '00000000000000000000000000000000'
const ZERO_SPAN = '0000000000000000'

/** A request's trace: the trace id it belongs to and the span id the gateway uses for its own calls. */
export interface TraceContext {
  /** 32 hex digits: the caller's when it sent a valid `traceparent`, else a new one. */
  readonly traceId: string
  /** 16 hex digits: the gateway's span, the parent id of every call it makes for this request. */
  readonly spanId: string
  /** Trace flags (2 hex digits): the caller's, or `01` (sampled) for a trace the gateway started. */
  readonly flags: string
  /** The caller's `tracestate`, forwarded only with its valid `traceparent`. */
  readonly tracestate: string | undefined
  /** The `traceparent` to send upstream: this trace, the gateway's span as parent. */
  readonly traceparent: string
  /** The upstream the request's last upstream call went to (its registry name), for the access log. */
  readonly upstream: string | undefined
  /** How long that call took until its answer's head or its failure, in milliseconds, retries included. */
  readonly upstreamMs: number | undefined
  /** The caller's span id (its traceparent's parent id), the parent of the gateway's SERVER span. */
  readonly parentSpanId: string | undefined
  /** Whether the trace is recorded (flags' sampled bit). */
  readonly sampled: boolean
  /** Told by the upstream engine when a call made for this request settled. */
  upstreamSettled (upstream: string, seconds: number): void
  /**
   * A CLIENT span for one attempt of an upstream call when spans are exported and this trace is sampled (its
   * `traceparent` is what the attempt sends); undefined otherwise, and the call sends `traceparent` as it is.
   */
  startAttempt (upstream: string, method: string, targetUrl: string, path: string, attempt: number): AttemptSpan | undefined
}

/**
 * A class rather than an object literal: the upstream fields are written after the trace is made, and a class
 * whose constructor writes every field keeps one hidden class for it.
 */
class RequestTrace implements TraceContext {
  readonly traceparent: string
  upstream: string | undefined = undefined
  upstreamMs: number | undefined = undefined

  readonly sampled: boolean

  constructor (readonly traceId: string, readonly spanId: string, readonly flags: string, readonly tracestate: string | undefined,
    readonly parentSpanId: string | undefined) {
    this.traceparent = `00-${traceId}-${spanId}-${flags}`
    // The sampled bit is the flags' lowest bit (W3C Trace Context §3.2.2.5).
    this.sampled = (Number.parseInt(flags, 16) & 1) === 1
  }

  startAttempt (upstream: string, method: string, targetUrl: string, path: string, attempt: number): AttemptSpan | undefined {
    const tracing = activeTracing()
    if (tracing === undefined || !this.sampled) return undefined
    return tracing.startAttempt(this.traceId, this.spanId, upstream, method, targetUrl, path, attempt)
  }

  upstreamSettled (upstream: string, seconds: number): void {
    this.upstream = upstream
    this.upstreamMs = seconds * 1000
  }
}

const RANDOM_BYTES = 4096
const random = Buffer.alloc(RANDOM_BYTES)
/** The pool's bytes as one hex string; ids are slices of it (a slice is not a copy). */
let randomPool = ''
let offset = 0

/**
 * `bytes` random bytes as hex, sliced from a pool of 4 KiB refilled and hex-encoded when spent: one fill and one
 * encoding per ~170 requests, cheaper than encoding each id on its own (docs/performance.md, "The tricks in the code").
 */
function randomHex (bytes: number): string {
  const chars = bytes * 2
  if (offset + chars > randomPool.length) {
    randomFillSync(random)
    randomPool = random.toString('hex')
    offset = 0
  }
  const hex = randomPool.slice(offset, offset + chars)
  offset += chars
  return hex
}

/**
 * Parses a `traceparent` header value (W3C Trace Context §3.2): a known shape, not all-zero ids, version not
 * `ff`; version 00 must have exactly four fields. Anything else is treated as absent (the gateway starts a trace).
 */
export function parseTraceparent (value: string | undefined): { traceId: string, spanId: string, flags: string } | undefined {
  if (value === undefined || value.length < 55) return undefined
  const m = TRACEPARENT.exec(value.trim())
  if (m === null) return undefined
  const [, version, traceId, spanId, flags, rest] = m as RegExpExecArray & [string, string, string, string, string, string | undefined]
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined
  if (traceId === ZERO_TRACE || spanId === ZERO_SPAN) return undefined
  return { traceId, spanId, flags }
}

/** The trace of `headers`: continued when they carry a valid `traceparent`, else started here. */
export function traceFromHeaders (headers: IncomingMessage['headers']): TraceContext {
  const given = typeof headers.traceparent === 'string' ? parseTraceparent(headers.traceparent) : undefined
  const traceId = given?.traceId ?? randomHex(16)
  // Without span export every trace is passed on as sampled, or as the caller said; with it, the sampling settings decide.
  const tracing = activeTracing()
  const flags = tracing === undefined ? given?.flags ?? '01' : tracing.flagsFor(traceId, given?.flags)
  const spanId = randomHex(8)
  const state = headers.tracestate
  return new RequestTrace(traceId, spanId, flags, given === undefined ? undefined : typeof state === 'string' ? state : state?.join(','), given?.spanId)
}

/**
 * Where a request's trace is kept: a property of the request itself, not a WeakMap keyed by the request (an ephemeron
 * entry per request for the garbage collector to trace; docs/performance.md, "The tricks in the code").
 */
const TRACE = Symbol('lanegate.trace')
type TracedRequest = IncomingMessage & { [TRACE]?: TraceContext }

/**
 * The trace of one request, worked out the first time something needs it (a log line, a call upstream) and kept
 * for the rest of the request: a request that logs nothing and calls nothing (a cached-token GET at `warn`)
 * costs no parsing and no random ids.
 */
export function traceOf (req: IncomingMessage): TraceContext {
  let trace = (req as TracedRequest)[TRACE]
  if (trace === undefined) {
    trace = traceFromHeaders(req.headers)
    ;(req as TracedRequest)[TRACE] = trace
  }
  return trace
}

/** The trace `traceOf` made for this request so far, without making one. */
export function madeTraceOf (req: IncomingMessage): TraceContext | undefined {
  return (req as TracedRequest)[TRACE]
}

/** What a call made outside a request sends and records: its `traceparent`, and a CLIENT span per attempt. */
export type BackgroundTrace = Pick<TraceContext, 'traceparent' | 'tracestate' | 'startAttempt'>

/**
 * The trace of work the gateway does on its own after (or without) a request: a fan-out dispatch's deliveries.
 * Under `parent` (the commit request's trace, when the commit's process delivers) each attempt's CLIENT span is a
 * child of that request's SERVER span; without one (a delivery resumed by the recovery sweep) a new trace is
 * started, its attempts root spans of it. Either way each attempt sends its own span as `traceparent`. Nothing is
 * told back to `parent` (the request's access line keeps its own upstream calls).
 */
export function backgroundTrace (parent: TraceContext | undefined): BackgroundTrace {
  if (parent !== undefined) {
    return {
      traceparent: parent.traceparent,
      tracestate: parent.tracestate,
      startAttempt: (upstream, method, targetUrl, path, attempt) => parent.startAttempt(upstream, method, targetUrl, path, attempt),
    }
  }
  const traceId = randomHex(16)
  const flags = activeTracing()?.flagsFor(traceId, undefined) ?? '01'
  return {
    traceparent: `00-${traceId}-${randomHex(8)}-${flags}`,
    tracestate: undefined,
    startAttempt (upstream, method, targetUrl, path, attempt) {
      const tracing = activeTracing()
      if (tracing === undefined || flags !== '01') return undefined
      return tracing.startAttempt(traceId, undefined, upstream, method, targetUrl, path, attempt)
    },
  }
}
