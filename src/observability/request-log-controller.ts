import { LogController, type FastifyReply, type FastifyRequest } from 'fastify'

/** Told of every answered request once its answer finished (the access log's line, the SERVER span). */
export type CompletedRequestObserver = (request: FastifyRequest, reply: FastifyReply) => void

type LogControllerOptions = ConstructorParameters<typeof LogController>[0]

/**
 * fastify's per-request logging as one line per request, and the request's end told to `observers`:
 * - `request completed` at info carries the request (method, URL with secrets redacted, id) beside the status and
 *   time, and `incoming request` goes to debug (fastify's own controller wrote both at info, so every request took
 *   two lines). At debug both are written, so a request still in flight (a hang) shows.
 * - fastify calls `requestCompleted` once per request when the response has finished or failed (hijacked relays,
 *   404s and refusals included), at any log level: the access log and span export need no hook of their own, and
 *   while both are off a request costs two calls that read one field each.
 */
export class RequestLogController extends LogController {
  readonly #observers: readonly CompletedRequestObserver[]

  constructor (options: LogControllerOptions & { observers?: readonly CompletedRequestObserver[] } = {}) {
    super(options)
    this.#observers = options.observers ?? []
  }

  override incomingRequest (request: FastifyRequest, _reply: FastifyReply): void {
    // Below debug pino's debug() is a no-op: nothing is serialised.
    if (this.isLogDisabled(request)) return
    request.log.debug({ req: request }, 'incoming request')
  }

  override requestCompleted (error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    for (const observe of this.#observers) observe(request, reply)
    if (this.isLogDisabled(request)) return
    if (error !== null && error !== undefined) {
      reply.log.error({ req: request, res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored')
      return
    }
    reply.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed')
  }
}
