import type { FastifyReply, FastifyRequest } from 'fastify'
import { GatewayError } from '../errors/gateway-error.js'
import type { EnvelopeName } from '../errors/envelopes.js'
import { chainKey } from '../config/snapshot.js'
import type { Gateway } from '../gateway.js'

/**
 * The onRequest hook of a service route: takes the current snapshot once (the request keeps it to the end),
 * then runs the route's chain from that snapshot. A route that the snapshot no longer lists answers 404, which
 * is how removing a route from gateway.yaml takes effect without a restart.
 */
export function createChainRunner (gateway: Gateway, service: string, routeId: string, bootEnvelope: EnvelopeName) {
  const key = chainKey(service, routeId)
  return async function runPolicyChain (request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const snapshot = gateway.current()
    const envelope = snapshot.config.services[service]?.envelope ?? bootEnvelope
    request.gw = { snapshot, service, routeId, envelope }
    const chain = snapshot.chains.get(key)
    if (chain === undefined) throw new GatewayError('not_found')
    for (let i = 0; i < chain.length; i++) {
      const pending = (chain[i] as (rq: FastifyRequest, rp: FastifyReply) => void | Promise<void>)(request, reply)
      // Most steps are synchronous on the hot path (cached token, memory limiter): don't pay a microtask for them.
      if (pending !== undefined) await pending
    }
  }
}
