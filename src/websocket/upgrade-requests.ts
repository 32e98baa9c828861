import { ServerResponse, type IncomingMessage } from 'node:http'
import type { Duplex } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import { isWebSocketUpgrade, serveAsPlainRequest } from './plain-upgrade-request.js'

/** The socket and the bytes read past the head of an upgrade request, until a route takes them or answers. */
export interface PendingUpgrade {
  readonly socket: Duplex
  readonly head: Buffer
  /** The response fastify writes a refusal (or any ordinary answer) on. */
  readonly response: ServerResponse
}

const pending = new WeakMap<IncomingMessage, PendingUpgrade>()

/**
 * Sends every WebSocket upgrade request (`Connection: upgrade`, `Upgrade: websocket`, no body) through
 * fastify's router like any other request, so the route's whole `onRequest` chain (auth, token type, scope,
 * organization, limits, outside plugins) runs on it first. Every other upgrade request (h2c, which the gateway
 * never does on plaintext, or a request with a body) is served as the plain request it also is, its body intact
 * (plain-upgrade-request.ts).
 *
 * Node hands an upgrade request to the server's `upgrade` listener with the bare socket, bypassing fastify. Here it
 * gets an ordinary `ServerResponse` on that socket (the way @fastify/websocket does it) and goes to
 * `app.routing`: a refusal, a 404, or a route that does not allow upgrades answers in plain HTTP on that response,
 * and the socket is closed once the answer is written (nothing is upgraded). A route that allows WebSocket finds its
 * socket with `pendingUpgrade(request.raw)` and takes it over (websocket-relay.ts).
 */
export function routeUpgradeRequests (app: FastifyInstance): void {
  app.server.on('upgrade', function routeUpgrade (req: IncomingMessage, socket: Duplex, head: Buffer) {
    if (!isWebSocketUpgrade(req)) {
      serveAsPlainRequest(app.server, req, socket, head)
      return
    }
    const response = new ServerResponse(req)
    // One answer per upgrade socket: the connection is not kept alive for another request.
    response.shouldKeepAlive = false
    response.assignSocket(socket as never)
    response.once('finish', function closeAfterAnswer () { socket.end() })
    socket.on('error', function upgradeSocketError () { socket.destroy() })
    pending.set(req, { socket, head, response })
    app.routing(req, response)
  })
}

/** The upgrade a request asked for, when it came through the `upgrade` listener; else undefined. */
export function pendingUpgrade (req: IncomingMessage): PendingUpgrade | undefined {
  return pending.get(req)
}

/** Whether the request asks to become a WebSocket (and came as an upgrade; not, say, an h2c upgrade). */
export function wantsWebSocket (req: IncomingMessage): boolean {
  if (!pending.has(req)) return false
  const upgrade = req.headers.upgrade
  return typeof upgrade === 'string' && upgrade.toLowerCase() === 'websocket'
}

/** Hands the socket over: the response no longer writes on it, nor closes it once answered. */
export function takeUpgradeSocket (req: IncomingMessage): PendingUpgrade | undefined {
  const upgrade = pending.get(req)
  if (upgrade === undefined) return undefined
  pending.delete(req)
  upgrade.response.removeAllListeners('finish')
  upgrade.response.detachSocket(upgrade.socket as never)
  return upgrade
}
