import type { FastifyRequest } from 'fastify'
import type { ApiKeySlot } from '../../src/plugin/index.js'
import { perConnection } from '../token-slot-of.js'

/**
 * One API key slot per client connection (HTTP/1.1 socket, HTTP/2 session): a keep-alive till sends the same key on
 * every request, and the verifier answers it from the slot. Apart from the token slots: a connection that sends a
 * key and a bearer token in turn (`bearer: true`) keeps each in its own memory.
 */
export const keySlotOf: (request: FastifyRequest) => ApiKeySlot = perConnection<ApiKeySlot>()
