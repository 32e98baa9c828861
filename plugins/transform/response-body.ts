import type { FastifyRequest } from 'fastify'
import type { PolicyContext, ReplacedAnswer, ResponseBodyHook, UpstreamAnswer } from '../../src/plugin/index.js'
import { bindingsOf } from './mapping.js'
import { isReshapeFailure, reshape, type Reshape } from './reshape.js'

/**
 * The response half of a body transform, a response body hook: a 2xx answer with a body is parsed as JSON,
 * reshaped and sent as JSON. Other answers pass as they came (a 4xx/5xx becomes `upstream_error`, as on any
 * relayed route). A body that is not JSON, or that the changes cannot take, is the upstream's fault: 502
 * `upstream_error` with `upstream_failure: protocol`, and the body is never shown to the caller.
 */
export function responseBodyHook (plan: Reshape, context: PolicyContext): ResponseBodyHook {
  return async function transformAnswer (answer: UpstreamAnswer, request: FastifyRequest) {
    if (answer.status < 200 || answer.status >= 300 || answer.body.length === 0) return undefined
    let body: unknown
    try {
      body = JSON.parse(answer.body.toString('utf8'))
    } catch {
      return protocolFailure(context, 'The upstream answered with a body that is not valid JSON.')
    }
    const result = await reshape(plan, body, () => bindingsOf(request, context.principal(request), answer.status))
    if (isReshapeFailure(result)) return protocolFailure(context, `The upstream's answer could not be transformed: ${result.message} (path "${result.path}").`)
    const replaced: ReplacedAnswer = { headers: { 'content-type': 'application/json; charset=utf-8' }, body: JSON.stringify(result) }
    return replaced
  }
}

/** 502 `upstream_error`, `upstream_failure: protocol`, as the upstream engine renders an unusable answer. */
export function protocolFailure (context: PolicyContext, message: string) {
  return context.refuse('upstream_error', { message, fields: { upstream_status: 0, upstream_failure: 'protocol', upstream_body: '' } })
}
