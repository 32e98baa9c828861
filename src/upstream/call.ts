import type { Dispatcher } from 'undici'
import { GatewayError } from '../plugin/gateway-error.js'
import { readUpstreamBody } from './error-body.js'
import { failureKindOf, isTransportFailure, noTargetError, unreachableError, type UpstreamFailureKind } from './failure.js'
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
  const { label, retry, credential } = upstream.settings
  const signal = input.signal === undefined
    ? AbortSignal.timeout(input.timeoutMs)
    : AbortSignal.any([AbortSignal.timeout(input.timeoutMs), input.signal])
  const headers: Record<string, string> = { ...input.headers }
  if (credential !== undefined) headers.authorization = credential
  if (input.trace !== undefined) {
    headers.traceparent = input.trace.traceparent
    if (input.trace.tracestate !== undefined) headers.tracestate = input.trace.tracestate
  }
  const tried: Target[] = []
  const mayRetry = retry.methods.includes(input.method)
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
      if (failure === undefined) upstream.budget?.request()
      else recordRetry(upstream.name, 'sent')
      headers.host = target.host
      const span = input.trace?.startAttempt?.(upstream.name, input.method, target.url, input.path, tried.length + 1)
      if (span !== undefined) headers.traceparent = span.traceparent
      let answer: CallAnswer
      const epoch = target.breaker?.epoch
      try {
        answer = await attempt(upstream, target, input, headers, signal, epoch)
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
        if (!mayRetry || (afterHead && !thrown.retriable) || tried.length >= retry.attempts || signal.aborted) throw error
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

async function attempt (upstream: Upstream, target: Target, input: CallInput, headers: Record<string, string>, signal: AbortSignal, epoch: number | undefined): Promise<CallAnswer> {
  const { label } = upstream.settings
  target.inFlight++
  const started = target.breaker === undefined ? 0 : performance.now()
  try {
    let answer: Dispatcher.ResponseData
    try {
      // A call to the target's URL itself (path '') on a target without a path asks for '/'.
      answer = await target.pool.request({ path: target.basePath + input.path || '/', method: input.method, headers, body: input.body, signal })
    } catch (error) {
      throw unreachableError(label, timedOut(signal) ? 'timeout' : failureKindOf(error), error)
    }
    target.recordSuccess()
    target.breaker?.recordAnswer(answer.statusCode, performance.now() - started, epoch)
    target.outcomes?.answer(answer.statusCode)
    const { statusCode: status } = answer
    if (status >= 400) {
      const body = await readUpstreamBody(answer.body, answer.headers['content-encoding'], input.maxErrorBodyBytes)
      return { status, headers: answer.headers, body, bodyBytes: Buffer.from(body) }
    }
    const kind = input.overLimit ?? 'protocol'
    // A body declared larger than the bound is not read at all; another target would answer the same.
    if (Number(answer.headers['content-length'] ?? 0) > input.maxBodyBytes) {
      answer.body.destroy()
      throw new AfterHead(overLimitError(label, kind, input.maxBodyBytes), false)
    }
    try {
      const bytes = await readBounded(answer.body, input.maxBodyBytes, label, signal, kind)
      return { status, headers: answer.headers, body: bytes.toString('utf8'), bodyBytes: bytes }
    } catch (error) {
      if (!(error instanceof GatewayError)) throw error
      // Over the bound: the same on any target. Cut short mid-body: another attempt may get it whole.
      throw new AfterHead(error, error.fields.upstream_failure !== kind)
    }
  } finally {
    target.inFlight--
  }
}

/** A failure after the target's head arrived (already counted as its answer), and whether a retry may help. */
class AfterHead extends Error {
  constructor (readonly failure: GatewayError, readonly retriable: boolean) {
    super(failure.message)
  }
}

/** The whole body, or a `protocol` failure past `limit` bytes (the rest is not read). */
function overLimitError (label: string, kind: UpstreamFailureKind, limit: number): GatewayError {
  return unreachableError(label, kind, undefined, `${label} answered with a body larger than ${limit} bytes.`)
}

async function readBounded (body: Dispatcher.ResponseData['body'], limit: number, label: string, signal: AbortSignal, kind: UpstreamFailureKind): Promise<Buffer> {
  const chunks: Buffer[] = []
  let size = 0
  try {
    for await (const chunk of body) {
      size += (chunk as Buffer).length
      if (size > limit) {
        body.destroy()
        throw overLimitError(label, kind, limit)
      }
      chunks.push(chunk as Buffer)
    }
  } catch (error) {
    if (error instanceof GatewayError) throw error
    if (timedOut(signal)) throw unreachableError(label, 'timeout', error)
    throw unreachableError(label, failureKindOf(error), error, `${label} closed the connection while answering.`)
  }
  return Buffer.concat(chunks)
}

function timedOut (signal: AbortSignal): boolean {
  return signal.aborted && (signal.reason as Error | undefined)?.name === 'TimeoutError'
}
