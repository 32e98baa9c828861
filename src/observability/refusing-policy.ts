import type { FastifyRequest } from 'fastify'
import { policyName } from '../config/semantic-checks.js'
import { routePolicies } from '../config/types.js'

/**
 * The name of the policy whose step refused the request (`request.gw.refusedAt`: its index in the route's chain,
 * the service's policies then the route's), or null when no step refused it.
 */
export function refusingPolicy (gw: FastifyRequest['gw'] | null): string | null {
  const step = gw?.refusedAt
  if (gw === null || step === undefined) return null
  const settings = gw.snapshot.config.services[gw.service]
  const route = settings?.routes[gw.routeId]
  if (settings === undefined || route === undefined) return null
  const entry = step < settings.policies.length ? settings.policies[step] : routePolicies(route)[step - settings.policies.length]
  return entry === undefined ? null : policyName(entry)
}
