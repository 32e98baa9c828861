import { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'

/** Told of every answered request once its answer finished (the access log's line, the SERVER span). */
export type CompletedRequestObserver = (request: FastifyRequest, reply: FastifyReply) => void

/**
 * fastify's LogController that also tells `observers` of each answered request. fastify calls `requestCompleted`
 * once per request when the response has finished or failed (hijacked relays, 404s and refusals included), at any
 * log level, so the access log and span export need no hook of their own; while both are off a request costs two
 * calls that read one field each. Every other call goes to `inner` (the metered or the plain controller) unchanged.
 */
export class RequestCompletedController extends LogController {
  readonly #inner: LogController
  readonly #observers: readonly CompletedRequestObserver[]

  constructor (inner: LogController, observers: readonly CompletedRequestObserver[]) {
    super({ disableRequestLogging: inner.disableRequestLogging, requestIdLogLabel: inner.requestIdLogLabel })
    this.#inner = inner
    this.#observers = observers
  }

  override requestCompleted (error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply, metadata?: Record<string, unknown>): void {
    this.#inner.requestCompleted(error, request, reply, metadata)
    for (const observe of this.#observers) observe(request, reply)
  }

  override isLogDisabled (request: FastifyRequest): boolean { return this.#inner.isLogDisabled(request) }
  override incomingRequest (request: FastifyRequest, reply: FastifyReply, metadata?: Record<string, unknown>): void { this.#inner.incomingRequest(request, reply, metadata) }
  override defaultErrorLog (error: Error, request: FastifyRequest, reply: FastifyReply, metadata?: Record<string, unknown>): void { this.#inner.defaultErrorLog(error, request, reply, metadata) }
  override streamError (error: Error, request: FastifyRequest, reply: FastifyReply, metadata?: Record<string, unknown>): void { this.#inner.streamError(error, request, reply, metadata) }
  override routeNotFound (request: FastifyRequest, reply: FastifyReply, metadata?: Record<string, unknown>): void { this.#inner.routeNotFound(request, reply, metadata) }
  override writeHeadError (error: Error, request: FastifyRequest, reply: FastifyReply, metadata?: Record<string, unknown>): void { this.#inner.writeHeadError(error, request, reply, metadata) }
  override serializerError (error: Error, request: FastifyRequest, reply: FastifyReply, metadata: { statusCode: number }): void { this.#inner.serializerError(error, request, reply, metadata) }
  override serviceUnavailable (logger: FastifyBaseLogger, server: FastifyInstance): void { this.#inner.serviceUnavailable(logger, server) }
}
