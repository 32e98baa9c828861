import type { FastifyRequest } from 'fastify'
import { GatewayError } from '../../plugin/gateway-error.js'

/** `application/json`, optionally with `charset=utf-8` (any case, quoted or not) and nothing else. */
const JSON_UTF8 = /^application\/json\s*(;\s*charset\s*=\s*(?:utf-8|"utf-8")\s*)?$/i

/**
 * preParsing hook of the payments routes that take a body: a body must be `application/json` in UTF-8, else
 * 415 `unsupported_media_type` (docs/errors.md) before anything parses it. Without it fastify's own text/plain
 * parser handed JSON-in-text to validation (422), and `charset=utf-16`/`latin1` bodies were read as UTF-8. A
 * request without a body (cancel takes an optional one) passes.
 */
export async function requireJsonBody (request: FastifyRequest): Promise<void> {
  const { headers } = request
  const hasBody = headers['transfer-encoding'] !== undefined || (headers['content-length'] !== undefined && headers['content-length'] !== '0')
  const type = headers['content-type']
  if (!hasBody && type === undefined) return
  if (type === undefined || !JSON_UTF8.test(type.trim())) {
    throw new GatewayError('unsupported_media_type')
  }
}
