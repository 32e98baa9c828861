import type { FastifyRequest } from 'fastify'

/** Where the close code of a relayed WebSocket is kept: a property of its upgrade request (WebSockets only). */
const CLOSE_CODE = Symbol('lanegate.websocketCloseCode')
type ClosedRequest = FastifyRequest & { [CLOSE_CODE]?: number }

/**
 * The WebSocket relayed for `request` (its upgrade) ended with `code` on the caller's side. Its access line and
 * SERVER span are then written, spanning the session from the upgrade request to the close.
 */
export function noteWebSocketClosed (request: FastifyRequest, code: number): void {
  ;(request as ClosedRequest)[CLOSE_CODE] = code
}

/** The close code of the WebSocket relayed for `request`, once it ended. */
export function webSocketCloseCodeOf (request: FastifyRequest): number | undefined {
  return (request as ClosedRequest)[CLOSE_CODE]
}
