import type { FastifyRequest } from 'fastify'

/** Where the code of the error a request was answered with is kept: a property of the request (errors only). */
const ANSWERED_ERROR = Symbol('lanegate.answeredError')
type NotedRequest = FastifyRequest & { [ANSWERED_ERROR]?: string }

/** The error handler answered `request` with the error `code` (the access line's `error`, the SERVER span's `error.type`). */
export function noteAnsweredError (request: FastifyRequest, code: string): void {
  ;(request as NotedRequest)[ANSWERED_ERROR] = code
}

/** The code of the error `request` was answered with, if the error handler answered it. */
export function answeredErrorOf (request: FastifyRequest): string | undefined {
  return (request as NotedRequest)[ANSWERED_ERROR]
}
