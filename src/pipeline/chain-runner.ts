import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import { runSteps } from '../plugin/run-steps.js'
import { GatewayError } from '../plugin/gateway-error.js'
import type { EnvelopeName } from '../plugin/envelope-name.js'
import { chainKey } from '../runtime/snapshot.js'
import type { Snapshot } from '../runtime/snapshot.js'
import { noteRefusingStep, requestContext } from '../runtime/request-context.js'

/**
 * The onRequest hook of a service route: takes the current snapshot once (the request keeps it to the end),
 * then runs the route's chain from that snapshot. A route that the snapshot no longer lists answers 404, which
 * is how removing a route from gateway.yaml takes effect without a restart.
 *
 * It is a callback-style hook on purpose: most steps are synchronous on the hot path (a cached token, the
 * memory limiter), and a chain of synchronous steps then costs no promise and no microtask at all. A step that
 * returns a promise (a token seen for the first time, a Redis limiter) suspends the chain until it settles.
 */
export function createChainRunner (current: () => Snapshot, service: string, routeId: string, bootEnvelope: EnvelopeName) {
  const key = chainKey(service, routeId)
  // What the route's requests read from the last snapshot: a snapshot never changes, so until a reload swaps it the
  // envelope and the chain are taken from here, not looked up again on every request.
  let seen: Snapshot | undefined
  let envelope: EnvelopeName = bootEnvelope
  let chain: ReturnType<Snapshot['chains']['get']>
  return function runPolicyChain (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
    const snapshot = current()
    if (snapshot !== seen) {
      envelope = snapshot.config.services[service]?.envelope ?? bootEnvelope
      chain = snapshot.chains.get(key)
      seen = snapshot
    }
    request.gw = requestContext(snapshot, service, routeId, envelope)
    if (chain === undefined) {
      done(new GatewayError('not_found'))
      return
    }
    runSteps(chain, 0, request, reply, done, noteRefusingStep)
  }
}

/**
 * The onRequest hook of a CORS preflight (`OPTIONS` with `Access-Control-Request-Method`) for a route: runs the
 * route's preflight-answering steps (`cors`) alone, which answer it. A route with none goes on to the 405 answer.
 */
export function createPreflightRunner (current: () => Snapshot, service: string, routeId: string, envelope: EnvelopeName) {
  const key = chainKey(service, routeId)
  return function runPreflight (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
    const snapshot = current()
    request.gw = requestContext(snapshot, service, routeId, snapshot.config.services[service]?.envelope ?? envelope)
    const steps = snapshot.preflights?.get(key)
    if (steps === undefined) {
      done()
      return
    }
    runSteps(steps, 0, request, reply, done, noteRefusingStep)
  }
}
