import type { FastifyInstance } from 'fastify'
import { GatewayError } from '../plugin/gateway-error.js'

/**
 * The deepest nesting of arrays and objects a JSON request body may have. No gateway body needs more than a few
 * levels; the bound keeps every recursive walk of a body (canonical JSON for idempotency, validation) far from
 * the stack limit (10,000-deep `metadata` → RangeError → 500).
 */
export const MAX_JSON_DEPTH = 32

/**
 * Whether `text` opens more than `maxDepth` nested arrays/objects. One pass over the characters, no recursion
 * and no allocation; brackets inside strings are skipped. A body shorter than maxDepth + 1 characters cannot be
 * too deep, so the common small body costs one comparison.
 */
export function jsonDeeperThan (text: string, maxDepth: number): boolean {
  if (text.length <= maxDepth) return false
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c) i++ // backslash: skip the escaped character
      else if (c === 0x22) inString = false
    } else if (c === 0x22) {
      inString = true
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > maxDepth) return true
    } else if (c === 0x7d || c === 0x5d) {
      depth--
    }
  }
  return false
}

/**
 * Replaces fastify's `application/json` parser with the same parser (prototype and constructor poisoning still
 * refused) behind a nesting-depth check, so every JSON body of every route is bounded before anything walks it.
 * The refusal is a 400 `bad_request` rendered in the route's envelope by the error handler.
 */
export function registerBoundedJsonParser (app: FastifyInstance, maxDepth = MAX_JSON_DEPTH): void {
  const parse = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, function boundedJson (request, body, done) {
    if (jsonDeeperThan(body as string, maxDepth)) {
      done(new GatewayError('bad_request', { message: `The JSON body is nested deeper than ${maxDepth} levels.` }), undefined)
      return
    }
    parse(request, body as string, done)
  })
}
