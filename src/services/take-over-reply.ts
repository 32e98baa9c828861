import type { FastifyReply, FastifyRequest } from 'fastify'
import type { OutgoingHttpHeaders } from 'node:http'
import { markLongLived } from '../observability/long-lived.js'
import { responseHooksOf, runRelayedHeadHooks } from '../plugin/response-phase.js'
import { relayedResponseHeaders } from '../upstream/headers.js'
import type { UpstreamHeaders } from '../upstream/relay.js'

/**
 * The caller's headers for a relayed 1xx-3xx answer (the live proxy's and the proxy service's `takeOver`), taken
 * over from fastify (`reply.hijack()`: no serializer, no onSend hook): what the chain set (rate limits,
 * `x-request-id`, `cache-control: no-store`), overridden by the upstream's filtered headers (its own cache-control
 * included), and the request id again; then the response phase's head hooks the chain registered (`headers`)
 * change them (`hooks`: the relay looked them up once already). `undefined` when the caller is already gone.
 */
export function takeOverReplyHeaders (request: FastifyRequest, reply: FastifyReply, upstreamHeaders: UpstreamHeaders, status: number, eventStream: boolean, hooks = responseHooksOf(request)): OutgoingHttpHeaders | undefined {
  // getHeaders() is a fresh object (fastify copies its own and the raw response's), so it is filled in place.
  const headers = reply.getHeaders() as OutgoingHttpHeaders
  for (const name in headers) if (headers[name] === undefined) delete headers[name]
  relayedResponseHeaders(upstreamHeaders, headers)
  headers['x-request-id'] = String(request.id)
  if (hooks !== undefined) runRelayedHeadHooks(hooks, request, status, headers)
  reply.hijack()
  // An event stream stays open for minutes: timed apart from request latency (the relay read its head once).
  if (eventStream) markLongLived(reply.raw)
  return reply.raw.destroyed ? undefined : headers
}
