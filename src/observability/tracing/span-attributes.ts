import type { Attributes } from '@opentelemetry/api'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { answeredErrorOf } from '../answered-error.js'
import { refusingPolicy } from '../refusing-policy.js'
import { webSocketCloseCodeOf } from '../websocket-session.js'

/**
 * The SERVER span's name and attributes: OpenTelemetry's HTTP server conventions and lanegate's own. Only what the
 * gateway decided or what names a route: never a header value, a query string (it may carry a credential), a
 * cookie, a token or a body.
 */
export function serverSpanAttributes (request: FastifyRequest, reply: FastifyReply): { name: string, attributes: Attributes } {
  const gw = request.gw as FastifyRequest['gw'] | null
  const template = gw === null ? undefined : request.routeOptions.url
  const attributes: Attributes = {
    'http.request.method': request.method,
    'url.path': pathOf(request.url),
    'url.scheme': request.protocol,
    'http.response.status_code': reply.statusCode,
    'client.address': request.ip,
    'network.protocol.version': request.raw.httpVersion,
  }
  if (template !== undefined) attributes['http.route'] = template
  if (gw !== null) {
    attributes['lanegate.service'] = gw.service
    attributes['lanegate.route'] = gw.routeId
    if (gw.principal !== undefined) {
      attributes['lanegate.client_id'] = gw.principal.clientId
      attributes['lanegate.organization_id'] = gw.principal.organizationId
    }
    const policy = refusingPolicy(gw)
    if (policy !== null) attributes['lanegate.refused_by'] = policy
    const cache = gw.snapshot.cacheRoutes?.get(gw.service)?.has(gw.routeId) === true ? reply.getHeader('x-cache') : undefined
    if (cache === 'HIT' || cache === 'MISS') attributes['lanegate.cache'] = cache === 'HIT' ? 'hit' : 'miss'
  }
  const closeCode = webSocketCloseCodeOf(request)
  if (closeCode !== undefined) attributes['lanegate.websocket.close_code'] = closeCode
  const error = answeredErrorOf(request)
  if (error?.limit !== undefined) attributes['lanegate.limit'] = error.limit
  if (error !== undefined) attributes['error.type'] = error.code
  else if (reply.statusCode >= 500) attributes['error.type'] = String(reply.statusCode)
  return { name: template === undefined ? request.method : `${request.method} ${template}`, attributes }
}

/** The CLIENT span's attributes for one upstream attempt (the target's URL without user info, the path without its query). */
export function clientSpanAttributes (upstream: string, method: string, targetUrl: string, path: string, attempt: number): Attributes {
  const target = new URL(targetUrl)
  const base = target.pathname.endsWith('/') ? target.pathname.slice(0, -1) : target.pathname
  const attributes: Attributes = {
    'http.request.method': method,
    'server.address': target.hostname,
    'server.port': Number(target.port === '' ? (target.protocol === 'https:' ? 443 : 80) : target.port),
    'url.full': `${target.origin}${base}${pathOf(path)}`,
    'lanegate.upstream': upstream,
  }
  if (attempt > 1) attributes['http.request.resend_count'] = attempt - 1
  return attributes
}

function pathOf (url: string): string {
  const query = url.indexOf('?')
  return query === -1 ? url : url.slice(0, query)
}
