import { LogController, type FastifyReply, type FastifyRequest } from 'fastify'

/** Told of every answered request once its answer finished (the access log's line, the SERVER span). */
export type CompletedRequestObserver = (request: FastifyRequest, reply: FastifyReply) => void

/**
 * fastify's per-request logging as one line per request, and the request's end told to `observer`:
 * - `request completed` at info carries the request (method, URL with secrets redacted, id) beside the status and
 *   time, and `incoming request` goes to debug (fastify's own controller wrote both at info, so every request took
 *   two lines). At debug both are written, so a request still in flight (a hang) shows.
 * - fastify calls `requestCompleted` once per request when the response has finished or failed (hijacked relays,
 *   404s and refusals included), at any log level: the access log and span export need no hook of their own.
 */
export class RequestLogController extends LogController {
  /**
   * Told of each answered request: the access log and span export that are on, as one function (set whenever the
   * config changes them); undefined while both are off, so a request then pays this one field read for them.
   */
  observer: CompletedRequestObserver | undefined = undefined

  /** The observer whose exception was logged last: an observer that fails is logged once, not on every request. */
  #failedObserver: CompletedRequestObserver | undefined = undefined

  override incomingRequest (request: FastifyRequest, _reply: FastifyReply): void {
    // Below debug pino's debug() is a no-op: nothing is serialised.
    if (this.isLogDisabled(request)) return
    request.log.debug({ req: request }, 'incoming request')
  }

  override requestCompleted (error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const observe = this.observer
    if (observe !== undefined) this.#tell(observe, request, reply)
    if (this.isLogDisabled(request)) return
    if (error !== null && error !== undefined) {
      reply.log.error({ req: request, res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored')
      return
    }
    reply.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed')
  }

  /** fastify calls requestCompleted from the response's 'finish' listener, where an exception would end the process. */
  #tell (observe: CompletedRequestObserver, request: FastifyRequest, reply: FastifyReply): void {
    try {
      observe(request, reply)
    } catch (error) {
      if (this.#failedObserver === observe) return
      this.#failedObserver = observe
      reply.log.error({ err: error }, 'the access log or span export failed on an answered request (its later failures are not logged)')
    }
  }
}
