import type { FastifyRequest } from 'fastify'
import type { PolicyContext, ReplacedAnswer, Refusal, ResponseBodyHook, UpstreamAnswer } from '../../src/plugin/index.js'
import { FormatError, type BodyFormat } from './formats.js'
import { bindingsOf } from './mapping.js'
import { isReshapeFailure, reshape, type Reshape } from './reshape.js'

/** How the answer body is read, changed and written. */
export interface ResponseBodyPlan {
  readonly reshape: Reshape
  readonly from: BodyFormat
  readonly to: BodyFormat
  /**
   * Takes the decoded answer apart before it is reshaped (the SOAP envelope: its Body's content, or a Fault as an
   * error); any status. Absent: only a 2xx with a body is transformed.
   */
  readonly unwrap?: (value: unknown, answer: UpstreamAnswer) => { value: unknown } | Refusal | undefined
  /** The Content-Type of the written answer; the `to` format's when absent. */
  readonly contentType?: string
}

/**
 * The response half of a body transform, a response body hook: a 2xx answer with a body is read in its format,
 * reshaped and written in the caller's. Other answers pass as they came (a 4xx/5xx becomes `upstream_error`, as on
 * any relayed route), unless the plan unwraps them (SOAP Faults). A body that cannot be read, or that the changes
 * cannot take, is the upstream's fault: 502 `upstream_error` with `upstream_failure: protocol`, and the body is
 * never shown to the caller.
 */
export function responseBodyHook (plan: ResponseBodyPlan, timeoutMs: number, context: PolicyContext): ResponseBodyHook {
  const contentType = plan.contentType ?? (plan.to.name === 'json' ? 'application/json; charset=utf-8' : 'application/xml; charset=utf-8')
  return function transformAnswer (answer: UpstreamAnswer, request: FastifyRequest) {
    const wrapped = plan.unwrap !== undefined
    if (answer.body.length === 0 || (!wrapped && (answer.status < 200 || answer.status >= 300))) return undefined
    let body: unknown
    try {
      body = plan.from.decode(answer.body)
    } catch (error) {
      // A wrapped protocol's error answer that is not even its format stays the upstream's error, as it came.
      if (wrapped && answer.status >= 400) return undefined
      if (error instanceof FormatError) return protocolFailure(context, `The upstream answered with a body that is ${error.message}.`)
      throw error
    }
    if (plan.unwrap !== undefined) {
      const unwrapped = plan.unwrap(body, answer)
      if (unwrapped === undefined || unwrapped instanceof Error) return unwrapped
      body = unwrapped.value
    }
    // Synchronous unless the mapping runs in JSONata's evaluator.
    const result = reshape(plan.reshape, body, () => bindingsOf(request, context.principal(request), answer.status))
    return result instanceof Promise ? result.then((settled) => writeAnswer(answer, settled)) : writeAnswer(answer, result)
  }

  function writeAnswer (answer: UpstreamAnswer, result: unknown): ReplacedAnswer | Refusal {
    if (isReshapeFailure(result) && result.timedOut === true) {
      return context.refuse('transform_timeout', { message: `The answer's mapping ran longer than this route's limit (${timeoutMs} ms).`, fields: { location: 'answer', path: result.path } })
    }
    if (isReshapeFailure(result)) return protocolFailure(context, `The upstream's answer could not be transformed: ${result.message} (path "${result.path}").`)
    let out: Buffer
    try {
      out = plan.to.encode(result)
    } catch (error) {
      if (error instanceof FormatError) return protocolFailure(context, `The upstream's answer cannot be written as ${plan.to.name.toUpperCase()}: ${error.message}.`)
      throw error
    }
    return { status: answer.status, headers: { 'content-type': contentType }, body: out }
  }
}

/** 502 `upstream_error`, `upstream_failure: protocol`, as the upstream engine renders an unusable answer. */
export function protocolFailure (context: PolicyContext, message: string): Refusal {
  return context.refuse('upstream_error', { message, fields: { upstream_status: 0, upstream_failure: 'protocol', upstream_body: '' } })
}
