import type { IncomingMessage } from 'node:http'
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify'
import { WebSocketServer, type WebSocket } from 'ws'
import type { UpgradeLimits } from '../runtime/snapshot.js'
import type { Snapshot } from '../runtime/snapshot.js'
import { OpenWebSocket, type MessageCount, type MessageDirection } from './open-websocket.js'
import { recheckRights } from './recheck-rights.js'
import type { PendingUpgrade } from './upgrade-requests.js'

/** What the set of open connections reports (metrics.ts's WebSocket series; absent without metrics). */
export interface WebSocketRecorder {
  opened (service: string, route: string): void
  /** The count of a route's messages one way, incremented in place by each open connection (found once per connection). */
  messageCount (service: string, route: string, direction: MessageDirection): MessageCount
  closed (service: string, route: string, code: number): void
}

/** Told when a relayed WebSocket's caller side ended, with its close code (the access line and span of the session). */
export type WebSocketEnded = (request: FastifyRequest, reply: FastifyReply, code: number) => void

/** Where the messages of a gateway without metrics are counted: one throwaway pair for every connection. */
const UNCOUNTED = { in: { value: 0 }, out: { value: 0 } }
/** RFC 6455 §7.1.5: the connection closed without a close frame (reported, never sent). */
const ABNORMAL_CLOSURE = 1006

/**
 * The gateway's open WebSockets: accepts a caller's upgrade once its upstream answered 101, and ends connections
 * when their right to exist ends, on events only (an idle connection costs no periodic work):
 * - a config reload: `recheckAll(snapshot)` is called on the swap (app.ts listens with `gateway.onSwap`); every
 *   connection's route is looked up in the new snapshot; a route no longer served closes with 1001, and the route's
 *   `recheck` steps (auth, token type, scope, organization, ip restriction) run again on the upgrade request: a
 *   refusal closes with 1008 and the error code as reason. A connection accepted after a swap its upgrade request
 *   did not see (its upstream handshake was under way) is rechecked when it is accepted.
 * - shutdown: `closeAll(1001)` before the listener closes.
 * - the token's `exp` and the idle timeout: each connection's one timer (open-websocket.ts).
 */
export class OpenWebSockets {
  private readonly open = new Set<OpenWebSocket>()
  /** One `ws` server per message size limit (its `maxPayload` is per server). */
  private readonly servers = new Map<number, WebSocketServer>()
  /** The subprotocol the upstream chose, answered to the caller by `handleProtocols`. */
  private readonly protocols = new WeakMap<IncomingMessage, string>()
  private closing = false
  /** How many connections were rechecked against a new snapshot (tests: none without a reload). */
  rechecks = 0
  /** What every connection tells the set: one object for all of them. */
  private readonly events = {
    closed: (connection: OpenWebSocket, code: number): void => {
      if (!this.open.delete(connection)) return
      this.recorder?.closed(connection.request.gw.service, connection.request.gw.routeId, code)
      this.ended?.(connection.request, connection.reply, code)
    },
  }

  constructor (
    private readonly current: () => Snapshot,
    private readonly logger: FastifyBaseLogger,
    private readonly recorder?: WebSocketRecorder,
    private readonly ended?: WebSocketEnded,
  ) {}

  get size (): number {
    return this.open.size
  }

  /**
   * Completes the caller's handshake on `upgrade.socket` (the upstream's chosen subprotocol echoed) and relays
   * between it and `upstream` under `limits`. `release` is called once the upstream socket closed.
   */
  accept (request: FastifyRequest, reply: FastifyReply, upgrade: PendingUpgrade, upstream: WebSocket, limits: UpgradeLimits, release: () => void): void {
    if (this.closing) {
      upgrade.socket.destroy()
      this.abandon(request, reply, upstream, release)
      return
    }
    if (upstream.protocol !== '') this.protocols.set(request.raw, upstream.protocol)
    let accepted = false
    this.serverFor(limits.max_message_bytes).handleUpgrade(request.raw, upgrade.socket, upgrade.head, (client) => {
      accepted = true
      const { service, routeId } = request.gw
      const counts = this.recorder === undefined
        ? UNCOUNTED
        : { in: this.recorder.messageCount(service, routeId, 'in'), out: this.recorder.messageCount(service, routeId, 'out') }
      const connection = new OpenWebSocket(request, reply, client, upstream, limits, this.events, release, counts)
      this.open.add(connection)
      this.recorder?.opened(service, routeId)
      // A reload swapped in while the upstream answered the handshake found no connection to recheck: do it now.
      const snapshot = this.current()
      if (request.gw.snapshot !== snapshot) this.recheck(connection, snapshot)
    })
    // ws calls back at once or never: never when the caller's socket has already ended (it left while the upstream
    // answered) or its handshake failed ws's own checks (ws answered 400). Without this the upstream stayed open.
    if (!accepted) {
      upgrade.socket.destroy()
      this.abandon(request, reply, upstream, release)
    }
  }

  /**
   * Ends a session whose upstream answered 101 but whose caller is gone (it left during the upstream's handshake, or
   * the gateway is shutting down): the upstream is dropped, and the request is completed as a session that ended
   * abnormally (1006: no close frame), so its log line, access line, span and request metrics are not lost. It was
   * never open: the WebSocket gauges and close counts do not see it.
   */
  abandon (request: FastifyRequest, reply: FastifyReply, upstream: WebSocket, release: () => void): void {
    upstream.terminate()
    release()
    this.ended?.(request, reply, ABNORMAL_CLOSURE)
  }

  /** Closes every connection with `code` (shutdown: 1001) and resolves once they are closed, or after `waitMs`. */
  async closeAll (code: number, reason: string, waitMs = 3_000): Promise<void> {
    this.closing = true
    const sockets = [...this.open].map((connection) => connection.client)
    for (const connection of [...this.open]) connection.end(code, reason)
    const deadline = Date.now() + waitMs
    while (sockets.some((s) => s.readyState !== s.CLOSED) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    for (const server of this.servers.values()) server.close()
  }

  private serverFor (maxPayload: number): WebSocketServer {
    let server = this.servers.get(maxPayload)
    if (server === undefined) {
      server = new WebSocketServer({
        noServer: true,
        clientTracking: false,
        perMessageDeflate: false,
        maxPayload,
        skipUTF8Validation: true,
        handleProtocols: (_offered, req) => this.protocols.get(req) ?? false,
      })
      this.servers.set(maxPayload, server)
    }
    return server
  }

  /** Runs every open connection's rechecks against `snapshot`, just swapped in: each stays or is closed. */
  recheckAll (snapshot: Snapshot): void {
    for (const connection of [...this.open]) this.recheck(connection, snapshot)
  }

  private recheck (connection: OpenWebSocket, snapshot: Snapshot): void {
    this.rechecks++
    recheckRights(connection.request, connection.reply, snapshot, (verdict) => {
      if (verdict.ok) {
        connection.expireAt(connection.request.gw.principal?.expiresAt)
        return
      }
      this.logger.info({ service: connection.request.gw.service, route: connection.request.gw.routeId, close_code: verdict.code, reason: verdict.reason }, 'websocket closed after a config reload')
      connection.end(verdict.code, verdict.reason)
    })
  }
}
