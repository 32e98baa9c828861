import type { FastifyRequest } from 'fastify'
import { definePolicy, type PolicyContext, type Refusal, type StepOutcome } from '../../src/plugin/index.js'
import { noPrincipal } from '../principal-of.js'
import { organizationSchema, type OrganizationOptions } from './schema.js'

/**
 * `organization`: the organization or store named by a path or query parameter must be reachable from the
 * caller's `organization_id` (itself, its stores, its descendants). The answer never tells a store outside the
 * tree from one that does not exist: same status, same body (E1). The answer (with the lane serving the store) is
 * kept on the request (`context.reachStore`), so the service does not decide again.
 */
const organization = definePolicy({
  name: 'organization',
  description: 'Requires the targeted organization or store to be in the caller\'s organization tree.',
  // Reads only the request, the caller and the config: run again on the route's open WebSockets after a reload.
  recheck: true,
  schema: organizationSchema,
  requires: () => ['auth'],
  check (options) {
    if ((options.param === undefined) === (options.query === undefined)) {
      return [{ path: '', message: 'set exactly one of param and query' }]
    }
    return []
  },
  summarize: (options) => `${options.param !== undefined ? `path :${options.param}` : `query ?${options.query ?? ''}`} in the caller's tree${options.not_found ? ' (404 otherwise)' : ''}`,
  refusals: (options) => options.not_found ? ['store_not_found'] : options.query !== undefined ? ['forbidden', 'bad_request'] : ['forbidden'],
  explain (options, request) {
    const caller = request.caller
    if (caller === undefined || !request.authenticated) return { outcome: 'refuse', status: 500, code: 'internal_error', note: 'no auth step before this one' }
    // What a request this step cannot judge yet (an id it will only see at run time) may be refused with.
    const refusal = options.not_found ? { status: 404, code: 'store_not_found' } : { status: 403, code: 'forbidden' }
    if (options.param === undefined) {
      return { outcome: 'depends', ...refusal, note: `?${options.query ?? ''}, when sent, must be in ${caller.organizationId}'s tree` }
    }
    if (request.anyParams === true) {
      return { outcome: 'depends', ...refusal, note: `:${options.param} must be ${options.not_found ? 'a store' : 'an organization or store'} in ${caller.organizationId}'s tree` }
    }
    const target = request.params[options.param] ?? ''
    const reach = request.settings.reach(caller.organizationId, target)
    if (options.not_found) {
      if (reach !== 'served') {
        const why = reach === 'outside' ? `is not in ${caller.organizationId}'s tree` : 'is not a store with an active install and a lane'
        return { outcome: 'refuse', status: 404, code: 'store_not_found', note: `${target || `(no :${options.param})`} ${why}` }
      }
      return { outcome: 'pass', note: `store ${target} is in ${caller.organizationId}'s tree` }
    }
    return reach !== 'outside'
      ? { outcome: 'pass', note: `${target} is in ${caller.organizationId}'s tree` }
      : { outcome: 'refuse', status: 403, code: 'forbidden', note: `${target || `(no :${options.param})`} is not in ${caller.organizationId}'s tree` }
  },
  create (options, context) {
    const notFound = options.not_found
    const needs = notFound ? 'served' : 'reachable'
    return function organizationStep (request: FastifyRequest): StepOutcome {
      const principal = context.principal(request)
      if (principal === undefined) return noPrincipal(context)
      const target = targetOf(request, options, context)
      if (target === undefined) return
      if (typeof target !== 'string') return target
      // The one store-access rule; its answer rides on the request for the service.
      if (!context.reachStore(request, principal.organizationId, target, needs)) {
        return notFound
          ? context.refuse('store_not_found', { fields: { store_org_id: target }, message: 'Store not found or not accessible.' })
          : context.refuse('forbidden', { message: 'This organization is outside your access.' })
      }
    }
  },
})

/** The target id, undefined when an optional query parameter is absent, or the refusal for a repeated one. */
function targetOf (request: FastifyRequest, options: OrganizationOptions, context: PolicyContext): string | Refusal | undefined {
  if (options.param !== undefined) {
    const value = (request.params as Record<string, unknown> | undefined)?.[options.param]
    // A route without the parameter is a config mistake: fail closed with the same answer as an unreachable id.
    return typeof value === 'string' ? value : ''
  }
  const query = request.query as Record<string, unknown> | undefined
  const value = query?.[options.query as string]
  if (value === undefined) return undefined
  if (typeof value !== 'string') {
    return context.refuse('bad_request', { message: `Send the ${options.query as string} parameter once.` })
  }
  return value
}

export default organization
