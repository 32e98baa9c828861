import type { FastifyRequest } from 'fastify'

/**
 * The name of the policy whose step refused the request, or null when no step refused it. The step itself is
 * kept (`request.gw.refusedBy`), not its place: the chain runner, a preflight and a WebSocket's rechecks each run
 * a different subset of the route's chain.
 */
export function refusingPolicy (gw: FastifyRequest['gw'] | null): string | null {
  const step = gw?.refusedBy
  if (gw === null || step === undefined) return null
  return gw.snapshot.stepPolicies?.get(step) ?? null
}
