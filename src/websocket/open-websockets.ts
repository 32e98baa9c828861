import type { IncomingMessage } from 'node:http'
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify'
import { WebSocketServer, type WebSocket } from 'ws'
import type { UpgradeLimits } from '../runtime/snapshot.js'
import type { Snapshot } from '../runtime/snapshot.js'
import { OpenWebSocket, type MessageDirection } from './open-websocket.js'
import { recheckRights } from './recheck-rights.js'
import type { PendingUpgrade } from './upgrade-requests.js'

/** What the set of open connections reports (metrics.ts's WebSocket series; absent without metrics). */
export interface WebSocketRecorder {
  opened (service: string, route: string): void
  message (service: string, route: string, direction: MessageDirection): void
  closed (service: string, route: string, code: number): void
}

/** How often the current snapshot is compared with the one the open connections were checked against. */
const RECHECK_INTERVAL_MS = 250

/**
 * The gateway's open WebSockets: accepts a caller's upgrade once its upstream answered 101, and ends connections
 * when their right to exist ends:
 * - a config reload: within RECHECK_INTERVAL_MS of the swap, every connection's route is looked up in the new
 *   snapshot; a route no longer served closes with 1001, and the route's `recheck` steps (auth, token type, scope,
 *   organization, ip restriction) run again on the upgrade request: a refusal closes with 1008 and the error code
 *   as reason. (A snapshot swap is one assignment with no event; polling it only while connections are open
 *   keeps the reload path untouched.)
 * - shutdown: `closeAll(1001)` before the listener closes.
 * - the token's `exp`: each connection's own timer (open-websocket.ts).
 */
export class OpenWebSockets {
  private readonly open = new Set<OpenWebSocket>()
  /** One `ws` server per message size limit (its `maxPayload` is per server). */
  private readonly servers = new Map<number, WebSocketServer>()
  /** The subprotocol the upstream chose, answered to the caller by `handleProtocols`. */
  private readonly protocols = new WeakMap<IncomingMessage, string>()
  private checkedSnapshot: Snapshot | undefined
  private watcher: NodeJS.Timeout | undefined
  private closing = false

  constructor (
    private readonly current: () => Snapshot,
    private readonly logger: FastifyBaseLogger,
    private readonly recorder?: WebSocketRecorder,
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
      upstream.terminate()
      release()
      upgrade.socket.destroy()
      return
    }
    if (upstream.protocol !== '') this.protocols.set(request.raw, upstream.protocol)
    this.serverFor(limits.max_message_bytes).handleUpgrade(request.raw, upgrade.socket, upgrade.head, (client) => {
      const { service, routeId } = request.gw
      const connection = new OpenWebSocket(request, reply, client, upstream, limits, {
        message: (_connection, direction) => this.recorder?.message(service, routeId, direction),
        closed: (closedOne, code) => {
          if (!this.open.delete(closedOne)) return
          this.recorder?.closed(service, routeId, code)
          if (this.open.size === 0) this.stopWatching()
        },
      }, release)
      this.open.add(connection)
      this.recorder?.opened(service, routeId)
      this.watch()
    })
  }

  /** Closes every connection with `code` (shutdown: 1001) and resolves once they are closed, or after `waitMs`. */
  async closeAll (code: number, reason: string, waitMs = 3_000): Promise<void> {
    this.closing = true
    this.stopWatching()
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

  private watch (): void {
    if (this.watcher !== undefined) return
    this.checkedSnapshot ??= this.current()
    this.watcher = setInterval(() => { this.recheckOnReload() }, RECHECK_INTERVAL_MS)
    this.watcher.unref()
  }

  private stopWatching (): void {
    clearInterval(this.watcher)
    this.watcher = undefined
  }

  private recheckOnReload (): void {
    const snapshot = this.current()
    if (snapshot === this.checkedSnapshot) return
    this.checkedSnapshot = snapshot
    for (const connection of [...this.open]) {
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
}
