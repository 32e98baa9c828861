import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { GatewayError, PolicyAnswer } from '../plugin/gateway-error.js'
import { sendPolicyAnswer } from '../plugin/send-policy-answer.js'
import type { EnvelopeName } from '../plugin/envelope-name.js'
import { renderError } from './envelopes.js'

/**
 * Translates anything thrown during a request into a catalogued GatewayError. Foreign errors (fastify's body
 * parser and validation, JSON syntax, timeouts) are mapped here and nowhere else; anything unknown becomes a
 * bare 500 whose details are only logged.
 */
export function toGatewayError (error: unknown): GatewayError {
  if (error instanceof GatewayError) return error
  const e = error as Partial<FastifyError> & { status?: number }
  switch (e.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new GatewayError('payload_too_large', { cause: error })
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new GatewayError('unsupported_media_type', { cause: error })
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new GatewayError('bad_request', { message: 'The request body is empty; send a JSON object.', cause: error })
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new GatewayError('bad_request', { message: 'The request body is not valid JSON.', cause: error })
    case 'FST_ERR_VALIDATION':
      return new GatewayError('validation_failed', { message: e.message, cause: error })
  }
  if (e instanceof SyntaxError || e.statusCode === 400) {
    return new GatewayError('bad_request', { message: 'The request body is not valid JSON.', cause: error })
  }
  if (e.statusCode === 413) return new GatewayError('payload_too_large', { cause: error })
  if (e.statusCode === 415) return new GatewayError('unsupported_media_type', { cause: error })
  return new GatewayError('internal_error', { cause: error })
}

/** `code: message` of an error's cause, for a log line without a stack. */
function causeOf (error: GatewayError): string | undefined {
  const cause = error.cause as { code?: unknown, message?: unknown } | undefined
  if (cause === undefined || cause === null) return undefined
  const code = typeof cause.code === 'string' ? `${cause.code}: ` : ''
  return `${code}${typeof cause.message === 'string' ? cause.message : String(cause)}`
}

/** Where a request no route took renders its errors: one envelope, or one found from the request (its path). */
export type FallbackEnvelope = EnvelopeName | ((request: FastifyRequest) => EnvelopeName)

/** The envelope a request's errors are rendered in: its route's, else the fallback. */
export function envelopeOf (request: FastifyRequest, fallback: FallbackEnvelope): EnvelopeName {
  const own = (request as { gw?: { envelope: EnvelopeName } | null }).gw?.envelope
  if (own !== undefined) return own
  return typeof fallback === 'string' ? fallback : fallback(request)
}

/**
 * Builds fastify's error handler. `fallback` is the envelope used before a route is known (`plain`, or the one of
 * the service whose prefix the path is under); `observe` sees every error as answered (metrics count refusals there).
 */
export function createErrorHandler (fallback: FallbackEnvelope = 'plain', observe?: (request: FastifyRequest, error: GatewayError, reply: FastifyReply) => void) {
  return function gatewayErrorHandler (error: unknown, request: FastifyRequest, reply: FastifyReply): void {
    // A step returns its answer (run-steps sends it); one that throws it lands here.
    if (error instanceof PolicyAnswer) {
      sendPolicyAnswer(reply, error)
      return
    }
    const gwError = toGatewayError(error)
    observe?.(request, gwError, reply)
    // The error's own entry: a policy-declared code is not in the catalogue.
    const entry = gwError.entry
    if (entry.upstream === true) {
      // The upstream's fault, not the gateway's: one warn line, no stack (a failing upstream must not flood the
      // error log). The cause (e.g. ECONNREFUSED) is kept by name and message only.
      request.log.warn({ code: gwError.code, status: gwError.status, ...gwError.fields, upstream_body: undefined, cs_body: undefined, cause: causeOf(gwError) }, gwError.message)
    } else if (gwError.status >= 500) {
      request.log.error({ err: error, code: gwError.code }, 'request failed')
    } else {
      request.log.info({ code: gwError.code, status: gwError.status }, gwError.message)
    }
    reply.code(gwError.status)
    for (const [name, value] of Object.entries(gwError.headers)) reply.header(name, value)
    reply.header('cache-control', 'no-store')
    reply.send(renderError(gwError, envelopeOf(request, fallback)))
  }
}
