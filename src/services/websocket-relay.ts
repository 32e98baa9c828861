import type { FastifyReply, FastifyRequest } from 'fastify'
import { GatewayError } from '../plugin/gateway-error.js'
import { markLongLived } from '../observability/long-lived.js'
import { traceOf } from '../observability/trace-context.js'
import type { UpgradeLimits } from '../runtime/snapshot.js'
import { chainKey } from '../runtime/snapshot.js'
import type { Upstream } from '../upstream/upstream.js'
import { connectUpstreamWebSocket } from '../upstream/websocket-connect.js'
import type { OpenWebSockets } from '../websocket/open-websockets.js'
import { takeUpgradeSocket, wantsWebSocket } from '../websocket/upgrade-requests.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The gateway's open WebSockets (app.ts decorates the root; websocket/open-websockets.ts). */
    websockets: OpenWebSockets
  }
}

/** The limits of the request's route when it may be upgraded and the request asks for a WebSocket; else undefined. */
export function upgradeLimits (request: FastifyRequest): UpgradeLimits | undefined {
  if (!wantsWebSocket(request.raw)) return undefined
  const { snapshot, service, routeId } = request.gw
  return snapshot.upgrades?.get(chainKey(service, routeId))
}

/**
 * Relays a caller's WebSocket upgrade (the route's chain passed) to `upstream` at `path` (checked by the service's
 * path rules, `access_token` removed). The upstream's handshake comes first: while it has not answered 101,
 * nothing is upgraded and a failure is the route's ordinary error answer (`upstream_error` with the upstream's
 * status, or 502). Then the caller's handshake completes and messages flow both ways (open-websocket.ts).
 */
export async function relayWebSocket (request: FastifyRequest, reply: FastifyReply, upstream: Upstream, path: string, limits: UpgradeLimits, maxErrorBodyBytes: number): Promise<FastifyReply> {
  const { headers } = request.raw
  if (typeof headers['sec-websocket-key'] !== 'string' || headers['sec-websocket-version'] !== '13' || request.method !== 'GET') {
    throw new GatewayError('bad_request', { message: 'The WebSocket handshake is malformed (a GET with Sec-WebSocket-Key and Sec-WebSocket-Version: 13).' })
  }
  const opened = await connectUpstreamWebSocket(upstream, {
    req: request.raw,
    path,
    clientIp: request.ip,
    requestId: String(request.id),
    trace: traceOf(request.raw),
    maxMessageBytes: limits.max_message_bytes,
    maxErrorBodyBytes,
  })
  reply.hijack()
  markLongLived(reply.raw)
  const upgrade = takeUpgradeSocket(request.raw)
  if (upgrade === undefined || upgrade.socket.destroyed) {
    // The caller left while the upstream was answering.
    request.server.websockets.abandon(request, reply, opened.socket, opened.release)
    return reply
  }
  request.server.websockets.accept(request, reply, upgrade, opened.socket, limits, opened.release)
  return reply
}
