import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http'
import { PassThrough } from 'node:stream'
import type { Dispatcher } from 'undici'
import { GatewayError } from '../plugin/gateway-error.js'
import { readUpstreamBody } from './error-body.js'
import { failureKindOf, isTransportFailure, mirroredError, noTargetError, unreachableError, type UpstreamFailureKind } from './failure.js'
import { HOST_VALUE_AT, upstreamRequestHeaderList, type UpstreamAttemptSpan, type UpstreamTrace } from './headers.js'
import { recordOutcome, upstreamFailureOutcome } from './outcome.js'
import { recordRetry } from '../observability/recorders.js'
import { ByteLimit, h2StreamOf, hasBody } from './request-body.js'
import type { Target } from './target.js'
import type { Upstream } from './upstream.js'

/** Response headers as undici hands them over. */
export type UpstreamHeaders = Record<string, string | string[] | undefined>

/** One caller request to relay to an upstream. */
export interface RelayInput {
  /** The caller's request; its body (if it declares one) is streamed upstream. */
  req: IncomingMessage
  /** The caller's raw response: written only once the upstream's answer is known to be relayed. */
  res: ServerResponse
  /** Path and query below the target's base path, starting with `/`; already checked (path safety is the caller's). */
  path: string
  /** The caller's address, sent as X-Forwarded-For. */
  clientIp: string
  /** Sent as X-Request-Id. */
  requestId: string
  /** The request's trace context, sent as `traceparent`/`tracestate` (the caller's own are dropped). */
  trace?: UpstreamTrace
  /** Largest request body relayed (413 payload_too_large when a streamed body crosses it). */
  maxBodyBytes: number
  /** How much of a failing upstream's body is kept in `upstream_body`. */
  maxErrorBodyBytes: number
  /**
   * Called once, when a 1xx-3xx answer is relayed: takes the reply over from fastify (hijack) and returns the
   * caller's headers for the upstream's (filter them with `relayedResponseHeaders`). Returning `undefined` means
   * the caller is gone: the upstream request is dropped.
   */
  takeOver: (upstreamHeaders: UpstreamHeaders, status: number, eventStream: boolean) => OutgoingHttpHeaders | undefined
  /** Sent instead of the caller's body (a policy replaced it; `content-length` already says its size); usually absent. */
  body?: Buffer
  /** Sent instead of the caller's method (a policy changed it with the body); usually absent. */
  method?: string
  /** Sees each body chunk relayed to the caller (a response hook's copy of the body); usually absent. */
  observeChunk?: (chunk: Buffer) => void
}

/** A relay's caller that is told how the relay settled, through `settled`, instead of a promise. */
export interface RelayCaller extends RelayInput {
  /**
   * Called once: with `undefined` once the caller's response has started (or the caller left), else with the
   * catalogued error to answer, while nothing has been written to the caller yet (see `startRelay`).
   */
  settled (error: GatewayError | undefined): void
}

/**
 * Relays one caller request to an upstream with undici's `dispatch` on the picked target's pool, and tells
 * `caller.settled` once, synchronously from the callback that settled it (no promise): with `undefined` once the
 * caller's response has started (1xx-3xx: streamed on the raw response from the upstream's first body byte, or its
 * end, with backpressure both ways), or with a catalogued error while nothing has been written to the caller yet:
 * - an upstream 4xx/5xx: `upstream_error` with its status and a bounded, decoded body (failure.ts);
 * - no answer (timeout, refused, reset before the first body byte…): 502 `upstream_error`, `upstream_status: 0`
 *   and `upstream_failure`. A request whose method is in `retry.methods` and that has no body is first tried again
 *   on another target, up to `retry.attempts` in all; nothing was written to the caller before a retry;
 * - every target ejected: 502 `upstream_failure: 'ejected'` at once, nothing sent.
 * Once streaming, an upstream that breaks off or stalls destroys the caller's connection, so a cut response never
 * looks complete; a caller that goes away aborts the upstream request.
 *
 * Each relayed request is counted once in `lanegate_upstream_*` (outcome.ts) where it settles: `ok` when a 1xx-3xx
 * answer starts, else the outcome of the final failure (a retried failure is not counted; the caller's own
 * failures, a body too large or going away, are not the upstream's).
 *
 * Why undici's dispatch and not `http.request` or http-proxy-3: docs/performance.md, "The proxy service".
 */
export function startRelay (upstream: Upstream, caller: RelayCaller): void {
  const started = performance.now()
  const target = upstream.pick()
  if (target === undefined) {
    // Nothing is sent: health checks ejected every target, or circuit breakers keep them out (503 circuit_open).
    const error = noTargetError(upstream.settings.label, upstream.circuitRetryAfter())
    recordOutcome(upstream, upstreamFailureOutcome(error), started, caller.trace)
    caller.settled(error)
    return
  }
  // A request (not a retry) adds its share to the retry budget.
  if (upstream.budget !== undefined) upstream.budget.request(started)
  const headers = upstreamRequestHeaderList(caller.req.headers, {
    host: target.host,
    clientIp: caller.clientIp,
    requestId: caller.requestId,
    credential: upstream.credential,
    trace: caller.trace,
  })
  const attempt = new Attempt(upstream, caller, headers, target, undefined, started)
  // One listener for the request, whatever its retries: each attempt passes the news on to the one that retried it.
  caller.res.on('close', function callerLeft () { attempt.callerClosed() })
  startAttempt(attempt)
}

/** stream_idle_ms when an upstream's settings leave it out (lanes, the gateway's own single-target upstreams). */
export const DEFAULT_STREAM_IDLE_MS = 300_000

/** undici's own body timeout: past the longer of the two idle limits, so the attempt's own timer always acts first. */
function bodyBackstopMs (timeouts: Upstream['settings']['timeouts']): number {
  return Math.max(timeouts.body_idle_ms, timeouts.stream_idle_ms ?? DEFAULT_STREAM_IDLE_MS) + 1_000
}

/** Whether an answer is a server-sent event stream (`text/event-stream`, any parameters). */
function isEventStream (headers: UpstreamHeaders): boolean {
  const type = headers['content-type']
  return typeof type === 'string' && type.trimStart().toLowerCase().startsWith('text/event-stream')
}

/**
 * A timer that does not hold the process open: the caller's and the upstream's sockets do while a relay is in
 * flight. Node deletes a timer list as soon as its last refed timer is cleared and makes it again for the next one;
 * lists of unrefed timers are kept, so a relay's timer per request costs no list of its own (docs/performance.md).
 */
function unrefTimeout (callback: () => void, ms: number): NodeJS.Timeout {
  return setTimeout(callback, ms).unref()
}

function startAttempt (attempt: Attempt): void {
  const { target, input } = attempt
  attempt.span = input.trace?.startAttempt?.(attempt.upstream.name, input.req.method ?? 'GET', target.url, input.path, (attempt.tried?.length ?? 0) + 1)
  if (attempt.span !== undefined) setLastValue(attempt.headers, 'traceparent', attempt.span.traceparent)
  target.inFlight++
  const body = attempt.requestBody()
  target.pool.dispatch({
    path: target.basePath + input.path,
    method: input.method ?? input.req.method ?? 'GET',
    headers: attempt.headers,
    body,
    // Writes are never sent twice, even when a kept-alive connection turns out to be closed.
    idempotent: input.method === undefined && (input.req.method === 'GET' || input.req.method === 'HEAD'),
    // undici's timers are backstops: the attempt runs its own (response_ms to the answer's head, then body_idle_ms,
    // or stream_idle_ms for an event stream, which only the head tells apart). Without a request body those cover
    // the whole exchange, so undici's are off (0): each was a timer object per request that outlived a scavenge
    // (docs/performance.md, "The tricks in the code"). With a body, the pool's headers timeout stays: the attempt's own clock stops
    // while the body uploads.
    headersTimeout: body === null ? 0 : undefined,
    bodyTimeout: body === null ? 0 : bodyBackstopMs(attempt.upstream.settings.timeouts),
  }, attempt)
}

/** Sets the value of the last `name` in a flat `[name, value, …]` list (the gateway's own headers come last). */
function setLastValue (headers: string[], name: string, value: string): void {
  for (let at = headers.length - 2; at >= 0; at -= 2) {
    if (headers[at] === name) {
      headers[at + 1] = value
      return
    }
  }
}

/** One attempt of a relayed request on one target (undici's DispatchHandler). */
class Attempt implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined
  /** The outcome was given to the route handler (resolved or rejected), or handed to a retry. */
  private settled = false
  private streaming = false
  private complete = false
  private released = false
  private bodyTooLarge = false
  private waitingForDrain = false
  private status = 0
  private upstreamHeaders: UpstreamHeaders = {}
  /** Whether the answer is an event stream (its head said so): the caller's side times it apart. */
  private eventStream = false
  private errorBody: PassThrough | undefined
  /** No response head within response_ms (see `armResponseTimer`). */
  private timer: NodeJS.Timeout | undefined
  /** Cuts an answer body silent for body_idle_ms (stream_idle_ms for `text/event-stream`); refreshed per chunk. */
  private idle: NodeJS.Timeout | undefined
  /** How long the answer body may be silent, known once its head arrived (0 before). */
  private idleMs = 0
  /**
   * The caller's body has been handed to the upstream whole (at once for a request without one). Until then the
   * upstream waits for the caller, not the other way round: neither response_ms nor body_idle_ms runs.
   */
  private bodySent = true
  /** `performance.now()` when this attempt started, for the circuit breaker's `slow` rule (0 without a breaker). */
  private readonly attemptStarted: number
  /** The breaker's period when the attempt started: its outcome is a half-open trial only in that period. */
  private readonly breakerEpoch: number
  /** The attempt that tried the request again after this one failed (the caller's leaving is passed on to it). */
  private retriedBy: Attempt | undefined = undefined
  /** This attempt's CLIENT span, while span export is on and the trace sampled; ended at the answer's head or the failure. */
  span: UpstreamAttemptSpan | undefined = undefined

  constructor (
    readonly upstream: Upstream,
    readonly input: RelayCaller,
    /** The flat `[name, value, …]` list sent (`upstreamRequestHeaderList`), shared by the request's attempts. */
    readonly headers: string[],
    readonly target: Target,
    /** Targets earlier attempts of this request used (undefined on the first attempt). */
    readonly tried: Target[] | undefined,
    /** `performance.now()` when the first attempt started (for the upstream duration metric). */
    private readonly started: number,
  ) {
    this.attemptStarted = target.breaker === undefined ? 0 : performance.now()
    this.breakerEpoch = target.breaker === undefined ? 0 : target.breaker.epoch
    this.armResponseTimer()
  }

  /**
   * response_ms runs from the start of the attempt (waiting for a connection included) until the target takes the
   * request; for a request with a body it stops there and starts again, from zero, once the body is sent: a caller
   * that uploads slowly is the listener's business (request_timeout_ms over HTTP/1.1), never an upstream `timeout`.
   */
  private armResponseTimer (): void {
    this.timer = unrefTimeout(() => { this.fail(this.unreachable('timeout')) }, this.upstream.settings.timeouts.response_ms)
  }

  /** The caller's body, counted against `maxBodyBytes`, or null when the request declares none. */
  requestBody (): ByteLimit | Buffer | null {
    const { req } = this.input
    if (this.input.body !== undefined) return this.input.body.length === 0 ? null : this.input.body
    // A request that declares no body (no Content-Length above 0, no Transfer-Encoding: node's parser then reads
    // none) sends none; only a body is counted against the limit.
    if (!hasBody(req.headers, h2StreamOf(req))) return null
    const limited = new ByteLimit(this.input.maxBodyBytes)
    limited.on('error', () => {
      this.bodyTooLarge = true
      this.fail(new GatewayError('payload_too_large'))
    })
    req.on('error', () => { limited.destroy() })
    this.bodySent = false
    // undici reads the body as it writes it to the target: 'end' comes once its last byte was handed over.
    limited.once('end', () => { this.requestSent() })
    return req.pipe(limited)
  }

  /** The caller's body was sent whole: the upstream's clocks start (the head's again, or the body's idle one). */
  private requestSent (): void {
    this.bodySent = true
    if (this.released) return
    if (this.status === 0) {
      if (!this.settled) this.armResponseTimer()
      return
    }
    if (this.idleMs !== 0) this.startIdle()
  }

  onRequestStart (controller: Dispatcher.DispatchController): void {
    this.controller = controller
    // Timed out or abandoned while waiting for one of the target's connections: never sent.
    if (this.settled) {
      controller.abort(new GatewayError('upstream_error'))
      return
    }
    // The target took the request: the time its body takes to come from the caller is not the target's.
    if (!this.bodySent) clearTimeout(this.timer)
  }

  onResponseStart (controller: Dispatcher.DispatchController, statusCode: number, headers: UpstreamHeaders): void {
    if (statusCode < 200 && statusCode >= 100) return
    clearTimeout(this.timer)
    if (this.settled) {
      controller.abort(new GatewayError('upstream_error'))
      return
    }
    this.target.recordSuccess()
    if (statusCode < 100 || statusCode > 599) {
      // Not an answer: fail() counts it as the target's failure (breaker, outliers) and aborts the upstream request
      // too (after settling, so the abort's own error report is ignored).
      this.fail(unreachableError(this.upstream.settings.label, 'protocol', undefined, `${this.upstream.settings.label} answered with an invalid status.`))
      return
    }
    const breaker = this.target.breaker
    if (breaker !== undefined) breaker.recordAnswer(statusCode, performance.now() - this.attemptStarted, this.breakerEpoch)
    if (this.target.outcomes !== undefined) this.target.outcomes.answer(statusCode)
    this.status = statusCode
    this.span?.end({ status: statusCode })
    const eventStream = isEventStream(headers)
    this.watchIdle(eventStream)
    if (statusCode >= 400) {
      this.collectErrorBody(controller, statusCode, headers)
      return
    }
    this.upstreamHeaders = headers
    this.eventStream = eventStream
    // An event stream's head goes out at once (an EventSource opens on it), not with its first event.
    if (eventStream && this.startCaller()) this.input.res.flushHeaders()
  }

  /**
   * The body idle timer: a body silent this long is aborted like undici's own body timeout. An answer whose head
   * came while the caller's body was still being sent (an upstream that echoes or reports progress as it reads)
   * waits for that body, so the timer starts only once the body was sent.
   */
  private watchIdle (eventStream: boolean): void {
    const { timeouts } = this.upstream.settings
    this.idleMs = eventStream ? timeouts.stream_idle_ms ?? DEFAULT_STREAM_IDLE_MS : timeouts.body_idle_ms
    // Armed a microtask later: an answer that came whole in the read that brought its head (most small ones do) has
    // ended by then and needs no timer at all, instead of one made and cleared within the same read.
    if (this.bodySent) queueMicrotask(() => { if (!this.released) this.startIdle() })
  }

  private startIdle (): void {
    const ms = this.idleMs
    this.idle = unrefTimeout(() => {
      this.controller?.abort(Object.assign(new Error(`the answer body was silent for ${ms} ms`), { code: 'UND_ERR_BODY_TIMEOUT' }))
    }, ms)
  }

  onResponseData (controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.idle?.refresh()
    if (this.errorBody !== undefined) {
      if (!this.errorBody.destroyed) this.errorBody.write(chunk)
      return
    }
    if (this.settled && !this.streaming) return
    if (!this.streaming && !this.startCaller()) return
    this.input.observeChunk?.(chunk)
    if (!this.input.res.write(chunk) && !this.waitingForDrain) {
      // The caller reads slower than the upstream sends: stop reading the upstream until the caller drained (chunks
      // the parser already holds may still arrive meanwhile; they are buffered, not waited for twice).
      this.waitingForDrain = true
      controller.pause()
      this.input.res.once('drain', () => {
        this.waitingForDrain = false
        controller.resume()
      })
    }
  }

  onResponseEnd (): void {
    clearTimeout(this.idle)
    this.complete = true
    this.release()
    if (this.errorBody !== undefined) {
      this.errorBody.end()
      return
    }
    if (this.settled && !this.streaming) return
    if (!this.streaming && !this.startCaller()) return
    this.input.res.end()
  }

  onResponseError (_controller: Dispatcher.DispatchController, error: Error): void {
    clearTimeout(this.timer)
    clearTimeout(this.idle)
    this.release()
    if (this.streaming) {
      // Part of the body is out: the caller must see a cut connection, never a complete-looking response.
      this.input.res.destroy()
      return
    }
    if (this.errorBody !== undefined) {
      this.errorBody.destroy(error)
      return
    }
    if (this.settled) return
    if (this.bodyTooLarge) {
      this.fail(new GatewayError('payload_too_large'))
      return
    }
    // Answered, then broke off before the first body byte was relayed: the connection closed while answering.
    const kind = this.status !== 0 ? 'reset' : failureKindOf(error)
    this.fail(this.unreachable(kind, error, this.status !== 0 ? `${this.upstream.settings.label} closed the connection while answering.` : undefined))
  }

  private unreachable (kind: UpstreamFailureKind, cause?: unknown, message?: string): GatewayError {
    return unreachableError(this.upstream.settings.label, kind, cause, message)
  }

  private release (): void {
    if (this.released) return
    this.released = true
    this.target.inFlight--
  }

  /** Writes the caller's status and headers; false when the caller is gone (the upstream request is then dropped). */
  private startCaller (): boolean {
    const headers = this.input.takeOver(this.upstreamHeaders, this.status, this.eventStream)
    if (headers === undefined || this.input.res.destroyed) {
      this.settled = true
      this.controller?.abort(new GatewayError('upstream_error', { message: 'The caller closed the connection.' }))
      recordOutcome(this.upstream, 'ok', this.started, this.input.trace)
      this.input.settled(undefined)
      return false
    }
    this.settled = true
    this.streaming = true
    this.input.res.writeHead(this.status, headers)
    recordOutcome(this.upstream, 'ok', this.started, this.input.trace)
    this.input.settled(undefined)
    return true
  }

  /** An upstream 4xx/5xx: read a bounded, decoded part of its body, then answer `upstream_error` with its status. */
  private collectErrorBody (controller: Dispatcher.DispatchController, status: number, headers: UpstreamHeaders): void {
    const body = new PassThrough()
    this.errorBody = body
    body.on('close', () => {
      // Truncated (or broken off): the rest of the upstream's body is not read.
      if (!this.complete) controller.abort(new GatewayError('upstream_error'))
    })
    void readUpstreamBody(body, headers['content-encoding'], this.input.maxErrorBodyBytes).then((text) => {
      this.fail(mirroredError(this.upstream.settings.label, status, text))
    })
  }

  /** The caller's response closed (the caller went away, or the answer was sent): told to every attempt in order. */
  callerClosed (): void {
    if (!this.complete) {
      // The caller went away: nobody is left to answer, so the upstream request is dropped.
      if (this.settled) this.controller?.abort(new GatewayError('upstream_error', { message: 'The caller closed the connection.' }))
      else this.fail(new GatewayError('upstream_error', { message: 'The caller closed the connection.' }))
    }
    this.retriedBy?.callerClosed()
  }

  private fail (error: GatewayError): void {
    if (this.settled) return
    this.settled = true
    clearTimeout(this.timer)
    this.span?.end({ failure: String(error.fields.upstream_failure ?? error.code) })
    this.controller?.abort(error)
    if (isTransportFailure(error)) {
      // Once the head came its status was the breaker's outcome; a break-off after it is not counted twice.
      if (this.status === 0) {
        this.target.breaker?.recordFailure(this.breakerEpoch)
        this.target.outcomes?.failure()
      }
      this.upstream.reportFailure(this.target, error.fields.upstream_failure as string)
      if (this.retry(error)) return
    }
    recordOutcome(this.upstream, upstreamFailureOutcome(error), this.started, this.input.trace)
    this.input.settled(error)
  }

  /**
   * Tries the request again on a target not tried yet, when the method may be retried, it has no body and
   * attempts are left; nothing was written to the caller (a started response is never retried). False when not.
   */
  private retry (error: GatewayError): boolean {
    const { retry } = this.upstream.settings
    const tried = this.tried ?? []
    if (tried.length + 2 > retry.attempts || this.input.res.destroyed || hasBody(this.input.req.headers, h2StreamOf(this.input.req))) return false
    if (!retry.methods.includes(this.input.req.method ?? 'GET')) return false
    // Over the budget the retry is not sent: the original failure is answered.
    const budget = this.upstream.budget
    const ticket = budget?.spend()
    if (budget !== undefined && ticket === undefined) {
      recordRetry(this.upstream.name, 'over_budget')
      return false
    }
    tried.push(this.target)
    const next = this.upstream.pick(tried)
    if (next === undefined) {
      if (ticket !== undefined) budget?.refund(ticket)
      return false
    }
    recordRetry(this.upstream.name, 'sent')
    this.headers[HOST_VALUE_AT] = next.host
    this.upstream.logger?.info({ upstream_failure: error.fields.upstream_failure, attempt: tried.length + 1 }, 'upstream request retried on another target')
    this.retriedBy = new Attempt(this.upstream, this.input, this.headers, next, tried, this.started)
    startAttempt(this.retriedBy)
    return true
  }
}
