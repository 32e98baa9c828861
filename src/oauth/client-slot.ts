import type { FastifyRequest } from 'fastify'
import type { Http2ServerRequest } from 'node:http2'
import type { ClientSlot } from './client-auth.js'

/**
 * One client slot per client connection (HTTP/1.1 socket, HTTP/2 session), made empty on the connection's first
 * token request and gone with the connection (a WeakMap): a client renewing its token on a kept-alive connection
 * sends the same credentials every time. HTTP/2's `request.raw.socket` is a proxy made anew for every stream, so
 * the session is the connection there.
 */
const slots = new WeakMap<object, ClientSlot>()

export function clientSlotOf (request: FastifyRequest): ClientSlot {
  const raw = request.raw as FastifyRequest['raw'] | Http2ServerRequest
  const connection: object = 'stream' in raw && raw.stream !== undefined ? raw.stream.session ?? raw.stream : raw.socket ?? raw
  let slot = slots.get(connection)
  if (slot === undefined) {
    slot = {}
    slots.set(connection, slot)
  }
  return slot
}
