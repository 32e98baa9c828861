import type { FastifyRequest } from 'fastify'
import type { PolicyPlugin, StepOutcome } from '../../src/pipeline/policy.js'
import { bearerChallenge, defaultRealm } from '../../src/auth/bearer-challenge.js'
import { GatewayError } from '../../src/errors/gateway-error.js'
import { requirePrincipal } from '../../src/auth/require-principal.js'
import { tokenTypeSchema, type TokenTypeOptions } from './schema.js'

/**
 * `token-type`: some routes accept only service tokens or only user tokens (spec, Authentication 8). The wrong
 * type is a 401 whose body carries the spec's custom `invalid_token_type` while the challenge keeps the registered
 * `error="invalid_token"` (design point 3).
 */
const tokenType: PolicyPlugin<TokenTypeOptions> = {
  name: 'token-type',
  description: 'Accepts only the listed token types (service and/or user).',
  schema: tokenTypeSchema,
  requires: () => ['auth'],
  create (options) {
    const allowed = new Set(options.allow)
    const challenge = bearerChallenge(defaultRealm, { error: 'invalid_token', error_description: 'wrong token type' })
    return function tokenTypeStep (request: FastifyRequest): StepOutcome {
      const principal = requirePrincipal(request)
      if (!allowed.has(principal.tokenType)) {
        return new GatewayError('invalid_token_type', { headers: { 'WWW-Authenticate': challenge } })
      }
    }
  },
}

export default tokenType
