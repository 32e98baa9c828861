import type { FastifyRequest } from 'fastify'
import { bearerChallenge, defaultRealm, definePolicy, type StepOutcome } from '../../src/plugin/index.js'
import { noPrincipal } from '../principal-of.js'
import { tokenTypeSchema } from './schema.js'

/**
 * `token-type`: some routes accept only service tokens or only user tokens (spec, Authentication 8). The wrong
 * type is a 401 whose body carries the spec's custom `invalid_token_type` while the challenge keeps the registered
 * `error="invalid_token"` (design point 3).
 */
const tokenType = definePolicy({
  name: 'token-type',
  description: 'Accepts only the listed token types (service and/or user).',
  // Reads only the request, the caller and the config: run again on the route's open WebSockets after a reload.
  recheck: true,
  schema: tokenTypeSchema,
  requires: () => ['auth'],
  summarize: (options) => `${options.allow.join(' or ')} tokens`,
  refusals: () => ['invalid_token_type'],
  explain (options, request) {
    const caller = request.caller
    if (caller === undefined || !request.authenticated) return { outcome: 'refuse', status: 500, code: 'internal_error', note: 'no auth step before this one' }
    return (options.allow as readonly string[]).includes(caller.tokenType)
      ? { outcome: 'pass', note: `${caller.tokenType} tokens are accepted` }
      : { outcome: 'refuse', status: 401, code: 'invalid_token_type', note: `${caller.tokenType} tokens are refused (accepts ${options.allow.join(', ')})` }
  },
  create (options, context) {
    const allowed = new Set<string>(options.allow)
    const wrongType = { headers: { 'WWW-Authenticate': bearerChallenge(defaultRealm, { error: 'invalid_token', error_description: 'wrong token type' }) } }
    return function tokenTypeStep (request: FastifyRequest): StepOutcome {
      const principal = context.principal(request)
      if (principal === undefined) return noPrincipal(context)
      if (!allowed.has(principal.tokenType)) return context.refuse('invalid_token_type', wrongType)
    }
  },
})

export default tokenType
