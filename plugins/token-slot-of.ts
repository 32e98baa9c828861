import type { FastifyRequest } from 'fastify'
import type { Http2ServerRequest } from 'node:http2'
import type { TokenSlot } from '../src/plugin/index.js'

/**
 * The client connection a request came on. HTTP/1.1: its socket. HTTP/2: its session — `request.raw.socket` there
 * is a proxy made anew for every stream, so keying by it would give each request a connection of its own.
 */
export function connectionOf (request: FastifyRequest): object {
  const raw = request.raw as FastifyRequest['raw'] | Http2ServerRequest
  if ('stream' in raw && raw.stream !== undefined) return raw.stream.session ?? raw.stream
  return raw.socket ?? raw
}

/** One token slot per client connection (keep-alive clients send the same token on each request); `auth` and `api-key` share them. */
const slots = new WeakMap<object, TokenSlot>()

export function tokenSlotOf (request: FastifyRequest): TokenSlot {
  const connection = connectionOf(request)
  let slot = slots.get(connection)
  if (slot === undefined) {
    slot = {}
    slots.set(connection, slot)
  }
  return slot
}
