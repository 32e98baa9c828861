import type { FastifyRequest } from 'fastify'
import type { GatewayError } from '../plugin/gateway-error.js'

/**
 * Where the error a request was answered with is kept: a property of the request (errors only), the one record of
 * a refusal: its code (the access line's `error`, the SERVER span's `error.type`) and its rate limit (`limit`).
 */
const ANSWERED_ERROR = Symbol('lanegate.answeredError')
type NotedRequest = FastifyRequest & { [ANSWERED_ERROR]?: GatewayError }

/** The error handler answered `request` with `error`. */
export function noteAnsweredError (request: FastifyRequest, error: GatewayError): void {
  ;(request as NotedRequest)[ANSWERED_ERROR] = error
}

/** The error `request` was answered with, if the error handler answered it. */
export function answeredErrorOf (request: FastifyRequest): GatewayError | undefined {
  return (request as NotedRequest)[ANSWERED_ERROR]
}
