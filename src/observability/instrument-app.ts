import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import type { GatewayError } from '../errors/gateway-error.js'
import type { GatewayMetrics, RouteSeries } from './metrics.js'

/** The label of requests no route took (404s, the public /healthz). */
const UNROUTED_SERVICE = 'gateway'
const UNROUTED_ROUTE = 'unrouted'

/**
 * Counts every answered request of the public app by service, route id, method and status, with its latency.
 * One onResponse hook, callback-style (no promise per request); the route's series is found with two Map
 * lookups on ids that `request.gw` already carries, so no label string is built per request.
 */
export function instrumentApp (app: FastifyInstance, metrics: GatewayMetrics): void {
  const unrouted = metrics.route(UNROUTED_SERVICE, UNROUTED_ROUTE)
  app.addHook('onResponse', function recordRequest (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) {
    const gw = request.gw as FastifyRequest['gw'] | null | undefined
    const series: RouteSeries = gw?.service === undefined ? unrouted : metrics.route(gw.service, gw.routeId)
    series.record(request.method, reply.statusCode, reply.elapsedTime)
    done()
  })
}

/**
 * Counts a refusal the error handler is about to answer: 429s by the limit that refused them, 401/403 by
 * service and code, and every token-endpoint refusal by its OAuth error code. Only refusals pass here, never a
 * request that succeeded, so it costs the hot path nothing.
 */
export function countRefusal (metrics: GatewayMetrics, request: FastifyRequest, error: GatewayError): void {
  const gw = request.gw as FastifyRequest['gw'] | null | undefined
  const service = gw?.service ?? UNROUTED_SERVICE
  if (service === 'oauth' && gw?.routeId === 'token') {
    // The error's own entry (a policy-declared code has no catalogue entry).
    metrics.tokenErrors.inc(error.entry.oauth ?? error.code)
  }
  if (error.status === 429) metrics.rateLimited.inc(error.limit ?? 'unknown')
  else if (error.status === 401 || error.status === 403) metrics.authRefusals.inc(service, error.code)
}
