import { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import type { AccessLog } from './access-log.js'

/**
 * fastify's LogController that also writes each answered request's access line. fastify calls `requestCompleted`
 * once per request when the response has finished or failed (hijacked relays, 404s and refusals included), at any
 * log level, so the access log needs no hook of its own; with the access log off the request costs one field read.
 * Every other call goes to `inner` (the metered or the plain controller) unchanged.
 */
export class AccessLogController extends LogController {
  readonly #inner: LogController
  readonly #accessLog: AccessLog

  constructor (inner: LogController, accessLog: AccessLog) {
    super({ disableRequestLogging: inner.disableRequestLogging, requestIdLogLabel: inner.requestIdLogLabel })
    this.#inner = inner
    this.#accessLog = accessLog
  }

  override requestCompleted (error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply, metadata?: Record<string, unknown>): void {
    this.#inner.requestCompleted(error, request, reply, metadata)
    this.#accessLog.record(request, reply)
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
