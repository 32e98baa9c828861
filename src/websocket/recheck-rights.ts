import type { FastifyReply, FastifyRequest } from 'fastify'
import { GatewayError } from '../plugin/gateway-error.js'
import { runSteps } from '../plugin/run-steps.js'
import { chainKey, type Snapshot } from '../runtime/snapshot.js'
import { noteRefusingStep, requestContext } from '../runtime/request-context.js'

/** Whether an open connection may stay under a new snapshot, and else its close code and reason. */
export type RecheckVerdict = { ok: true } | { ok: false, code: number, reason: string }

/**
 * Asks a new snapshot whether the caller behind an open connection still has the right to it: the route must
 * still be served and still allow upgrades (else 1001 `route no longer served`), and the route's `recheck` steps
 * must pass when run again on the upgrade request (else 1008 with the refusal's code as reason: `unauthenticated`
 * for a revoked account, `forbidden` for a lost scope or organization). The request then carries the new
 * snapshot and the principal the steps found. Limits (rate-limit, connection-limit) are admission checks and are
 * not run again.
 */
export function recheckRights (request: FastifyRequest, reply: FastifyReply, snapshot: Snapshot, decide: (verdict: RecheckVerdict) => void): void {
  const { service, routeId } = request.gw
  const key = chainKey(service, routeId)
  const steps = snapshot.rechecks?.get(key)
  const block = snapshot.config.services[service]
  if (!snapshot.chains.has(key) || steps === undefined || block === undefined) {
    decide({ ok: false, code: 1001, reason: 'route no longer served' })
    return
  }
  request.gw = requestContext(snapshot, service, routeId, block.envelope)
  // The reply was hijacked when the connection was upgraded: nothing a step sets on it is ever sent.
  runSteps(steps, 0, request, reply, function rechecked (error) {
    if (error === undefined || error === null) decide({ ok: true })
    else decide({ ok: false, code: 1008, reason: error instanceof GatewayError ? error.code : 'forbidden' })
  }, noteRefusingStep)
}
