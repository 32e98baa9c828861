import type { FastifyRequest } from 'fastify'
import type { PolicyContext, StepOutcome } from '../../src/plugin/index.js'
import { FormatError, type BodyFormat } from './formats.js'
import { bindingsOf } from './mapping.js'
import { isReshapeFailure, reshape, type Reshape, type ReshapeFailure } from './reshape.js'

/** How the request body is read, changed and written. */
export interface RequestBodyPlan {
  readonly reshape: Reshape
  readonly from: BodyFormat
  readonly to: BodyFormat
  /** The Content-Type sent upstream (the `to` format's, or the SOAP version's). */
  readonly contentType: string
  /** The path sent upstream (SOAP: `''`, the target's URL); the caller's when absent. */
  readonly path?: string
  /** The method sent upstream (SOAP: POST); the caller's when absent. */
  readonly method?: string
  /** Build a body from `{}` when the caller sent none (SOAP: a GET becomes a call); else no body is relayed as it is. */
  readonly always?: boolean
  /** Wraps the changed value before it is written (the SOAP envelope); identity otherwise. */
  readonly wrap?: (value: unknown, request: FastifyRequest) => unknown
}

/**
 * The request half of a body transform: a request that sends a body has it read whole (at most `max_body_bytes`
 * and the relaying service's own limit: 413 past it), read in its format, reshaped, written in the upstream's
 * format and sent instead (`setRequestBody`). A request without a body is relayed as it is.
 */
export function requestBodyStep (plan: RequestBodyPlan, maxBodyBytes: number, timeoutMs: number, context: PolicyContext): (request: FastifyRequest) => StepOutcome | Promise<StepOutcome> {
  const limit = Math.min(maxBodyBytes, context.serviceBodyLimit ?? Infinity)
  const refuse = (failure: ReshapeFailure) => context.refuse('transform_failed', {
    message: failure.message,
    fields: failure.position === undefined ? { location: 'body', path: failure.path } : { location: 'body', path: failure.path, position: failure.position },
  })
  const timedOut = (failure: ReshapeFailure) => context.refuse('transform_timeout', {
    message: `The request body's mapping ran longer than this route's limit (${timeoutMs} ms).`,
    fields: { location: 'body', path: failure.path },
  })
  const unsupported = { message: `This route transforms a ${plan.from.name.toUpperCase()} body (${plan.from.contentType}) only.` }

  async function transformBody (request: FastifyRequest): Promise<StepOutcome> {
    const bytes = await context.readRequestBody(request, limit)
    if (bytes === undefined) return context.refuse('payload_too_large')
    let body: unknown
    try {
      body = plan.from.decode(bytes)
    } catch (error) {
      if (error instanceof FormatError) return refuse({ path: '', message: `The request body is ${error.message}.` })
      throw error
    }
    return transformValue(request, body)
  }

  /** Reshapes and writes the decoded body: synchronous unless the mapping runs in JSONata's evaluator. */
  function transformValue (request: FastifyRequest, body: unknown): StepOutcome | Promise<StepOutcome> {
    const result = reshape(plan.reshape, body, () => bindingsOf(request, context.principal(request)))
    return result instanceof Promise ? result.then((settled) => sendReshaped(request, settled)) : sendReshaped(request, result)
  }

  function sendReshaped (request: FastifyRequest, result: unknown): StepOutcome {
    if (isReshapeFailure(result)) return result.timedOut === true ? timedOut(result) : refuse(result)
    let out: Buffer
    try {
      out = plan.to.encode(plan.wrap === undefined ? result : plan.wrap(result, request))
    } catch (error) {
      if (error instanceof FormatError) return refuse({ path: '', message: `The transformed body cannot be written as ${plan.to.name.toUpperCase()}: ${error.message}.` })
      throw error
    }
    context.setRequestBody(request, out, { contentType: plan.contentType, method: plan.method, path: plan.path })
  }

  return function requestBody (request) {
    // No body (a SOAP call made from a GET): the changes start from an empty object.
    if (!declaresBody(request)) return plan.always === true ? transformValue(request, {}) : undefined
    if (Number(request.headers['content-length'] ?? 0) > limit) return context.refuse('payload_too_large')
    if (!plan.from.accepts(request.headers['content-type'] ?? '')) return context.refuse('unsupported_media_type', unsupported)
    return transformBody(request)
  }
}

function declaresBody (request: FastifyRequest): boolean {
  const length = request.headers['content-length']
  return length === undefined ? request.headers['transfer-encoding'] !== undefined : Number(length) > 0
}
