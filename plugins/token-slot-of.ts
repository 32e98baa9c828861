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

/**
 * One memory per client connection, made empty on the connection's first request and gone with the connection
 * (a WeakMap): keep-alive clients send the same credentials on every request.
 */
export function perConnection<T extends object> (): (request: FastifyRequest) => T {
  const memories = new WeakMap<object, T>()
  return function memoryOf (request) {
    const connection = connectionOf(request)
    let memory = memories.get(connection)
    if (memory === undefined) {
      memory = {} as T
      memories.set(connection, memory)
    }
    return memory
  }
}

/** The token slot of the request's connection; `auth` and `api-key` (with `bearer: true`) share them. */
export const tokenSlotOf: (request: FastifyRequest) => TokenSlot = perConnection<TokenSlot>()
