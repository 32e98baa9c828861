import type { FastifyRequest } from 'fastify'
import type { PolicyContext, StepOutcome } from '../../src/plugin/index.js'
import { relayBodyLimit } from '../relay-body-limit.js'
import { bindingsOf } from './mapping.js'
import { isReshapeFailure, reshape, type Reshape, type ReshapeFailure } from './reshape.js'

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i

/**
 * The request half of a body transform: a request that sends a body has it read whole (at most `max_body_bytes`
 * and the relaying service's own limit: 413 past it), parsed as JSON, reshaped, and the result sent upstream
 * instead (`setRequestBody`). A request without a body is relayed as it is.
 */
export function requestBodyStep (plan: Reshape, maxBodyBytes: number, context: PolicyContext): (request: FastifyRequest) => StepOutcome | Promise<StepOutcome> {
  const limit = Math.min(maxBodyBytes, relayBodyLimit(context) ?? Infinity)
  const refuse = (failure: ReshapeFailure) => context.refuse('transform_failed', {
    message: failure.message,
    fields: failure.position === undefined ? { location: 'body', path: failure.path } : { location: 'body', path: failure.path, position: failure.position },
  })

  async function transformBody (request: FastifyRequest): Promise<StepOutcome> {
    const bytes = await context.readRequestBody(request, limit)
    if (bytes === undefined) return context.refuse('payload_too_large')
    let body: unknown
    try {
      body = JSON.parse(bytes.toString('utf8'))
    } catch {
      return refuse({ path: '', message: 'The request body is not valid JSON.' })
    }
    const result = await reshape(plan, body, () => bindingsOf(request, context.principal(request)))
    if (isReshapeFailure(result)) return refuse(result)
    context.setRequestBody(request, Buffer.from(JSON.stringify(result)), 'application/json')
  }

  return function requestBody (request) {
    if (!declaresBody(request)) return
    if (Number(request.headers['content-length'] ?? 0) > limit) return context.refuse('payload_too_large')
    if (!JSON_TYPE.test(request.headers['content-type'] ?? '')) return context.refuse('unsupported_media_type', { message: 'This route transforms a JSON body (application/json) only.' })
    return transformBody(request)
  }
}

function declaresBody (request: FastifyRequest): boolean {
  const length = request.headers['content-length']
  return length === undefined ? request.headers['transfer-encoding'] !== undefined : Number(length) > 0
}
