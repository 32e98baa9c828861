import { LogController, type FastifyReply, type FastifyRequest } from 'fastify'

/**
 * fastify's per-request logging as one access-log line: `request completed` at info carries the request (method,
 * URL with secrets redacted, id) beside the status and time, and `incoming request` goes to debug. fastify's own
 * controller wrote both at info, so every request took two lines (three with a refusal's reason) and a short
 * load test wrote tens of thousands. At debug both are written, so a request still in flight (a hang) shows.
 */
export class AccessLogController extends LogController {
  override incomingRequest (request: FastifyRequest, _reply: FastifyReply): void {
    // Below debug pino's debug() is a no-op: nothing is serialised.
    if (this.isLogDisabled(request)) return
    request.log.debug({ req: request }, 'incoming request')
  }

  override requestCompleted (error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return
    if (error !== null && error !== undefined) {
      reply.log.error({ req: request, res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored')
      return
    }
    reply.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed')
  }
}
