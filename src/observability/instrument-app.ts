import type { FastifyReply, FastifyRequest } from 'fastify'
import { RequestLogController } from './request-log-controller.js'
import type { GatewayError } from '../plugin/gateway-error.js'
import { isLongLived } from './long-lived.js'
import type { GatewayMetrics, RouteSeries } from './metrics.js'

/** The label of requests no route took (404s, the public /healthz). */
const UNROUTED_SERVICE = 'gateway'
const UNROUTED_ROUTE = 'unrouted'

/**
 * The request log's controller (request-log-controller.ts) with every answered request of the public app counted by service, route id, method and
 * status, with its latency. fastify calls `requestCompleted` once per request when the response has finished (or
 * failed) — hijacked relays and 404s included — whether or not it logs it, so counting here costs the request no
 * hook: an `onResponse` hook ran fastify's hook runner (three closures and a callback) on every request for the
 * same call. The route's series is found with two Map lookups on ids that `request.gw` already carries, so no
 * label string is built per request.
 */
export class MeteredLogController extends RequestLogController {
  readonly #metrics: GatewayMetrics
  readonly #unrouted: RouteSeries

  constructor (metrics: GatewayMetrics, options: ConstructorParameters<typeof RequestLogController>[0]) {
    super(options)
    this.#metrics = metrics
    this.#unrouted = metrics.route(UNROUTED_SERVICE, UNROUTED_ROUTE)
  }

  override requestCompleted (error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const gw = request.gw as FastifyRequest['gw'] | null | undefined
    const series: RouteSeries = gw?.service === undefined ? this.#unrouted : this.#metrics.route(gw.service, gw.routeId)
    series.record(request.method, reply.statusCode, reply.elapsedTime, isLongLived(reply.raw))
    // Only routes whose chain ends in `cache` (marked when the snapshot was built) are counted, from the X-Cache
    // their policy set: every other request skips the header read, and a route that answers an X-Cache of its own
    // (a `headers` step, a backend behind a CDN) is not counted as a lookup it never made.
    if (gw?.service !== undefined && gw.snapshot.cacheRoutes?.get(gw.service)?.has(gw.routeId) === true) {
      const cached = reply.getHeader('x-cache')
      if (cached === 'HIT' || cached === 'MISS') this.#metrics.cacheLookups.inc(gw.service, gw.routeId, cached === 'HIT' ? 'hit' : 'miss')
    }
    super.requestCompleted(error, request, reply)
  }
}

/**
 * Counts a refusal the error handler is about to answer: 429s by the limit that refused them, 401/403 by
 * service and code, and every token-endpoint refusal by its OAuth error code. The answer itself is counted by
 * `requestCompleted` (app.ts completes one decided after its client left). Only refusals pass here, never a request
 * that succeeded, so it costs the hot path nothing.
 */
export function countRefusal (metrics: GatewayMetrics, request: FastifyRequest, error: GatewayError): void {
  const gw = request.gw as FastifyRequest['gw'] | null | undefined
  const service = gw?.service ?? UNROUTED_SERVICE
  if (service === 'oauth' && gw?.routeId === 'token') {
    // The error's own entry (a policy-declared code has no catalogue entry).
    metrics.tokenErrors.inc(error.entry.oauth ?? error.code)
  }
  const principal = gw?.principal
  if (principal?.tokenType === 'service' && (error.status === 401 || error.status === 403 || error.status === 429)) {
    metrics.clientRefusals.inc(principal.clientId, String(error.status))
  }
  if (error.status === 429) metrics.rateLimited.inc(error.limit ?? 'unknown')
  else if (error.status === 401 || error.status === 403) metrics.authRefusals.inc(service, error.code)
}
