import type { FastifyRequest } from 'fastify'
import type { PolicyPlugin, StepOutcome } from '../../src/pipeline/policy.js'
import { requirePrincipal } from '../../src/auth/require-principal.js'
import { GatewayError } from '../../src/errors/gateway-error.js'
import { organizationSchema, type OrganizationOptions } from './schema.js'

/**
 * `organization`: the organization or store named by a path or query parameter must be reachable from the
 * caller's `organization_id` (itself, its stores, its descendants). The answer never tells a store outside the
 * tree from one that does not exist: same status, same body (E1).
 */
const organization: PolicyPlugin<OrganizationOptions> = {
  name: 'organization',
  description: 'Requires the targeted organization or store to be in the caller\'s organization tree.',
  schema: organizationSchema,
  requires: () => ['auth'],
  check (options) {
    if ((options.param === undefined) === (options.query === undefined)) {
      return [{ path: '', message: 'set exactly one of param and query' }]
    }
    return []
  },
  create (options) {
    const notFound = options.not_found === true
    return function organizationStep (request: FastifyRequest): StepOutcome {
      const principal = requirePrincipal(request)
      const target = targetOf(request, options)
      if (target === undefined) return
      const { indexes } = request.gw.snapshot
      const reachable = indexes.reachable(principal.organizationId).has(target)
      if (notFound) {
        const store = indexes.stores.get(target)
        if (!reachable || store === undefined || !store.installActive || store.lane === undefined) {
          return new GatewayError('store_not_found', { fields: { store_org_id: target }, message: 'Store not found or not accessible.' })
        }
      } else if (!reachable) {
        return new GatewayError('forbidden', { message: 'This organization is outside your access.' })
      }
    }
  },
}

/** The target id, or undefined when an optional query parameter is absent. */
function targetOf (request: FastifyRequest, options: OrganizationOptions): string | undefined {
  if (options.param !== undefined) {
    const value = (request.params as Record<string, unknown> | undefined)?.[options.param]
    // A route without the parameter is a config mistake: fail closed with the same answer as an unreachable id.
    return typeof value === 'string' ? value : ''
  }
  const query = request.query as Record<string, unknown> | undefined
  const value = query?.[options.query as string]
  if (value === undefined) return undefined
  if (typeof value !== 'string') {
    throw new GatewayError('bad_request', { message: `Send the ${options.query as string} parameter once.` })
  }
  return value
}

export default organization
