import type { FastifyRequest } from 'fastify'
import type { Principal } from '../runtime/request-context.js'
import { GatewayError } from '../errors/gateway-error.js'

/**
 * The principal `auth` recorded. Policies that need it declare `requires: ['auth']`, so its absence is a chain
 * built wrongly: a 500, never a pass.
 */
export function requirePrincipal (request: FastifyRequest): Principal {
  const principal = request.gw.principal
  if (principal === undefined) {
    throw new GatewayError('internal_error', { cause: new Error(`route ${request.gw.service}/${request.gw.routeId} has no principal: auth must run first`) })
  }
  return principal
}
