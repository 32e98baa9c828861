import type { Dispatcher } from 'undici'
import { GatewayError } from '../plugin/gateway-error.js'
import { AfterHead, bufferedAttempt } from './buffered-attempt.js'
import { isTransportFailure, noTargetError, type UpstreamFailureKind } from './failure.js'
import type { UpstreamTrace } from './headers.js'
import { outcomeOfStatus, recordRetry } from '../observability/recorders.js'
import { recordOutcome, upstreamFailureOutcome } from './outcome.js'
import type { Target } from './target.js'
import type { Upstream } from './upstream.js'
import type { RetryTicket } from './retry-budget.js'

/** A request the gateway makes on its own behalf (fan-out's lane calls, timeseries queries). */
export interface CallInput {
  method: Dispatcher.HttpMethod
  /** Path and query below the target's base path, starting with `/`; `''` for the target's URL itself. */
  path: string
  /** Request headers; `host` and the upstream's credential (`authorization`) are set by the engine. */
  headers?: Record<string, string>
  body?: string | Buffer
  /** The whole exchange (connect, head and body, every attempt) is bounded by this. */
  timeoutMs: number
  /** A longer 2xx/3xx body is a failure (`overLimit`); a longer 4xx/5xx body is cut with " [truncated]". */
  maxBodyBytes: number
  /** The `upstream_failure` of a 2xx/3xx body over `maxBodyBytes`: `protocol` unless given. */
  overLimit?: UpstreamFailureKind
  /** How much of a 4xx/5xx body `errorBody` keeps. */
  maxErrorBodyBytes: number
  /** Aborts the call (e.g. the service closes); rejected like a network failure (`unreachable`). */
  signal?: AbortSignal
  /** The trace context of the request the call is made for, sent as `traceparent`/`tracestate`. */
  trace?: UpstreamTrace
  /**
   * A copy of a caller's request (a mirror): sent once (never retried, no share of the retry budget) and its answer
   * counted by its head and discarded (the body is read and kept nowhere, so `maxBodyBytes` does not apply).
   */
  copy?: boolean
}

/** What an upstream answered: any status. 4xx/5xx bodies are bounded and decoded text, for `upstream_body`. */
export interface CallAnswer {
  status: number
  headers: Record<string, string | string[] | undefined>
  /** The body as UTF-8 text: whole for 1xx-3xx, at most `maxErrorBodyBytes` (marked when cut) for 4xx/5xx. */
  body: string
  /** The same body as bytes: for 1xx-3xx exactly as received (binary, another charset), for 4xx/5xx `body`'s UTF-8. */
  bodyBytes: Buffer
}

/**
 * Makes one request through the upstream's engine: the picked target's pool (so these calls share the target's
 * socket cap with relayed traffic), redirects not followed, the answer read with a bound. Resolves with any
 * status the upstream answered (the caller decides what a 4xx means); rejects only with a 502 `upstream_error`
 * GatewayError (`upstream_status: 0`, `upstream_failure`) when no answer came: timeout, refused, reset, every
 * target ejected. Idempotent methods (per `retry`) are tried again on another target after a transport failure.
 * The call is counted once in `lanegate_upstream_*` (outcome.ts): by the answer's status, or the final failure.
 */
export async function callUpstream (upstream: Upstream, input: CallInput): Promise<CallAnswer> {
  const { label, retry } = upstream.settings
  const credential = upstream.credential
  const deadline = performance.now() + input.timeoutMs
  const headers: Record<string, string> = { ...input.headers }
  if (credential !== undefined) headers.authorization = credential
  if (input.trace !== undefined) {
    headers.traceparent = input.trace.traceparent
    if (input.trace.tracestate !== undefined) headers.tracestate = input.trace.tracestate
  }
  const tried: Target[] = []
  const mayRetry = input.copy !== true && retry.methods.includes(input.method)
  const started = performance.now()
  let failure: GatewayError | undefined
  let ticket: RetryTicket | undefined
  try {
    for (;;) {
      const target = upstream.pick(tried)
      // No target left: every one is ejected (first attempt), or the last failure stands (a retry found none).
      if (target === undefined) {
        if (ticket !== undefined) upstream.budget?.refund(ticket)
        throw failure ?? noTargetError(label, upstream.circuitRetryAfter())
      }
      if (failure !== undefined) recordRetry(upstream.name, 'sent')
      else if (input.copy !== true) upstream.budget?.request(started)
      headers.host = target.host
      const span = input.trace?.startAttempt?.(upstream.name, input.method, target.url, input.path, tried.length + 1)
      if (span !== undefined) headers.traceparent = span.traceparent
      let answer: CallAnswer
      const epoch = target.breaker?.epoch
      try {
        answer = await attempt(upstream, target, input, headers, deadline, epoch)
        span?.end({ status: answer.status })
      } catch (thrown) {
        const afterHead = thrown instanceof AfterHead
        const error = afterHead ? thrown.failure : thrown
        span?.end({ failure: error instanceof GatewayError ? String(error.fields.upstream_failure ?? error.code) : 'error' })
        if (!(error instanceof GatewayError)) throw error
        // Once the target answered, its head was counted a success: a body too large for this caller, or cut short,
        // is not counted again against its health or breaker (a small limit must not eject a healthy backend).
        if (!afterHead && isTransportFailure(error)) {
          target.breaker?.recordFailure(epoch)
          target.outcomes?.failure()
          upstream.reportFailure(target, error.fields.upstream_failure as string)
        }
        tried.push(target)
        failure = error
        if (!mayRetry || (afterHead && !thrown.retriable) || tried.length >= retry.attempts || performance.now() >= deadline || input.signal?.aborted === true) throw error
        // Over the budget the retry is not sent: this failure is the answer.
        ticket = upstream.budget?.spend()
        if (upstream.budget !== undefined && ticket === undefined) {
          recordRetry(upstream.name, 'over_budget')
          throw error
        }
        continue
      }
      recordOutcome(upstream, outcomeOfStatus(answer.status), started, input.trace)
      return answer
    }
  } catch (error) {
    recordOutcome(upstream, upstreamFailureOutcome(error), started, input.trace)
    throw error
  }
}

async function attempt (upstream: Upstream, target: Target, input: CallInput, headers: Record<string, string>, deadline: number, epoch: number | undefined): Promise<CallAnswer> {
  target.inFlight++
  const started = target.breaker === undefined ? 0 : performance.now()
  try {
    return await bufferedAttempt(target, upstream.settings.label, {
      path: input.path,
      method: input.method,
      headers,
      body: input.body,
      maxBodyBytes: input.maxBodyBytes,
      discardBody: input.copy === true,
      overLimit: input.overLimit ?? 'protocol',
      maxErrorBodyBytes: input.maxErrorBodyBytes,
      timeoutMs: Math.max(1, deadline - performance.now()),
      signal: input.signal,
    }, function countAnswer (status) {
      target.recordSuccess()
      target.breaker?.recordAnswer(status, performance.now() - started, epoch)
      target.outcomes?.answer(status)
    })
  } finally {
    target.inFlight--
  }
}
