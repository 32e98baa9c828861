import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'

/** A caller's own `X-Request-Id` is kept when it is this safe for logs and headers. */
const CALLER_ID = /^[A-Za-z0-9._:-]{1,64}$/

/** Ids drawn per random prefix: the last three hex digits of the id count through them (000 to 3ff). */
const BLOCK = 0x400
const ID_LENGTH = 36
const SUFFIXES: readonly string[] = Array.from({ length: BLOCK }, (_, n) => n.toString(16).padStart(3, '0'))

/**
 * Request ids with the shape of `randomUUID()`'s (a version 4 UUID, 36 characters), for a fraction of its cost.
 * One random UUID is drawn per 1,024 requests; its first 33 characters are kept and the last three hex digits
 * count through the block, each id a slice of one flat string that holds the block: node checks every header value
 * with a regular expression, which V8 runs through its runtime on a concatenated string (docs/performance.md,
 * "The tricks in the code").
 *
 * - Unique: within a block the counter differs; blocks and processes (workers, several instances) differ in 110
 *   random bits, as many as two random UUIDs sharing their last three digits.
 * - Not secret, as before: an id is a label for logs and support, never a credential (a caller may choose its own).
 *   What one id tells about others is only that ids of the same block share a prefix.
 */
export class RequestIds {
  #block = ''
  #next = BLOCK

  next (): string {
    if (this.#next === BLOCK) {
      const prefix = randomUUID().slice(0, 33)
      // join() builds one flat string (concatenating would build a tree of cons strings).
      this.#block = SUFFIXES.map((suffix) => prefix + suffix).join('')
      this.#next = 0
    }
    const at = this.#next++ * ID_LENGTH
    return this.#block.slice(at, at + ID_LENGTH)
  }
}

/** fastify's `genReqId`: the caller's `X-Request-Id` when it is safe, else a new id of this process. */
export function requestIdGenerator (): (req: IncomingMessage) => string {
  const ids = new RequestIds()
  return function genReqId (req) {
    const given = req.headers['x-request-id']
    return typeof given === 'string' && CALLER_ID.test(given) ? given : ids.next()
  }
}
