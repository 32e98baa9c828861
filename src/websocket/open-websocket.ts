import type { FastifyReply, FastifyRequest } from 'fastify'
import type WebSocket from 'ws'
import type { RawData } from 'ws'
import type { UpgradeLimits } from '../runtime/snapshot.js'

/** Which way a message went: from the caller to the upstream (`in`) or back (`out`). */
export type MessageDirection = 'in' | 'out'

/** A message count, incremented in place for each message relayed (the metrics' cell; found once per connection). */
export interface MessageCount { value: number }

/** The counts of an open connection's messages, by direction. */
export type MessageCounts = Readonly<Record<MessageDirection, MessageCount>>

/** What an open connection tells its owner (the set of open connections, which tells the metrics). */
export interface OpenWebSocketEvents {
  /** The caller's side ended with `code` (sent by the gateway, or received from the caller). */
  closed (connection: OpenWebSocket, code: number): void
}

/** Past this many bytes waiting to be written to one side, the other side is not read (backpressure). */
const HIGH_WATER_BYTES = 1024 * 1024
/** `send` options, one object each rather than one per message. */
const AS_BINARY = { binary: true } as const
const AS_TEXT = { binary: false } as const
/** How long a close handshake may take before the socket is cut (a peer that never answers the close frame). */
const CLOSE_TIMEOUT_MS = 2_000
/** A close code the gateway may send (RFC 6455 §7.4: 1005, 1006 and 1015 are never sent; 1004 is reserved). */
function sendable (code: number): boolean {
  return (code >= 1000 && code <= 1014 && code !== 1004 && code !== 1005 && code !== 1006) || (code >= 3000 && code <= 4999)
}

/**
 * One relayed WebSocket: the caller's socket and the upstream's, messages relayed whole both ways (text stays
 * text, binary stays binary) with backpressure, and the connection's end on both sides at once:
 * - either side closes: the other is closed with the same code and reason (a code that cannot be sent — 1005, 1006
 *   — becomes 1000 when no code was given, else 1001 towards the upstream and 1014 towards the caller);
 * - a message over `max_message_bytes` either way: 1009 to both;
 * - no message either way for `idle_timeout_seconds`: 1001 `idle timeout`;
 * - `end(code, reason)` from outside (the token expired, a reload took the right away, shutdown).
 */
export class OpenWebSocket {
  /** When the last message passed either way (ms since epoch): the idle timeout is counted from it, lazily. */
  private lastActivity = Date.now()
  private readonly idleMs: number
  /** The token's `exp` in ms since epoch; Infinity without one. */
  private expiresAtMs = Number.POSITIVE_INFINITY
  /**
   * The connection's one timer, at the earlier of its idle deadline and its token's expiry. A message only records
   * the time; when the timer fires early (there was traffic) it is armed again for the new deadline, so a busy
   * connection costs one timer callback per idle period and an idle one none before its deadline.
   */
  private deadlineTimer: NodeJS.Timeout | undefined
  private ending = false
  private done = false

  constructor (
    /** The upgrade request, whose chain passed (kept to run the route's rechecks on it after a reload). */
    readonly request: FastifyRequest,
    /** Its reply, hijacked when the connection was upgraded. */
    readonly reply: FastifyReply,
    readonly client: WebSocket,
    readonly upstream: WebSocket,
    limits: UpgradeLimits,
    private readonly events: OpenWebSocketEvents,
    private readonly onUpstreamGone: () => void,
    counts: MessageCounts,
  ) {
    this.idleMs = limits.idle_timeout_seconds * 1000
    this.relay(client, upstream, counts.in)
    this.relay(upstream, client, counts.out)
    client.on('close', (code: number, reason: Buffer) => { this.sideClosed('client', code, reason.toString()) })
    upstream.on('close', (code: number, reason: Buffer) => { this.sideClosed('upstream', code, reason.toString()) })
    client.on('error', (error: Error) => { this.sideFailed(error) })
    upstream.on('error', (error: Error) => { this.sideFailed(error) })
    this.expireAt(request.gw.principal?.expiresAt)
  }

  /** Closes both sides with `code` and `reason` (at most 123 bytes), once. */
  end (code: number, reason = ''): void {
    if (this.ending) return
    this.ending = true
    clearTimeout(this.deadlineTimer)
    closeSide(this.client, code, reason)
    closeSide(this.upstream, code === 1008 ? 1001 : code, code === 1008 ? 'caller no longer authorized' : reason)
    if (this.client.readyState !== this.client.CLOSED) this.events.closed(this, code)
  }

  /** (Re)sets the close at the token's `exp` (seconds since epoch; none when undefined): 1008 `token expired`. */
  expireAt (expiresAt: number | undefined): void {
    if (this.ending) return
    this.expiresAtMs = expiresAt === undefined ? Number.POSITIVE_INFINITY : expiresAt * 1000
    this.arm(Date.now())
  }

  /** Arms the one timer for the earlier deadline: the token's expiry, or `idleMs` after the last message. */
  private arm (now: number): void {
    clearTimeout(this.deadlineTimer)
    const deadline = Math.min(this.expiresAtMs, this.lastActivity + this.idleMs)
    // setTimeout's longest delay is 2^31-1 ms (24.8 days); a later deadline is re-armed when that fires.
    this.deadlineTimer = setTimeout(onDeadline, Math.max(0, Math.min(deadline - now, 2 ** 31 - 1)), this)
  }

  /** The timer fired: close for whichever deadline passed, else arm again (messages moved the idle deadline). */
  checkDeadlines (): void {
    if (this.ending) return
    const now = Date.now()
    if (now >= this.expiresAtMs) this.end(1008, 'token expired')
    else if (now - this.lastActivity >= this.idleMs) this.end(1001, 'idle timeout')
    else this.arm(now)
  }

  /**
   * Relays `from`'s messages to `to`. A message costs a time stamp, a count and the send: no callback, no object.
   * Only the message that takes `to`'s unsent bytes past HIGH_WATER_BYTES is sent with a callback: `from` is not
   * read until that message is written (and so everything before it).
   */
  private relay (from: WebSocket, to: WebSocket, count: MessageCount): void {
    const written = (): void => { from.resume() }
    from.on('message', (data: RawData, isBinary: boolean) => {
      this.lastActivity = Date.now()
      if (to.readyState !== to.OPEN) return
      count.value++
      const message = data as Buffer
      if (to.bufferedAmount + message.length <= HIGH_WATER_BYTES) {
        to.send(message, isBinary ? AS_BINARY : AS_TEXT)
        return
      }
      // The receiving side reads slower than this one sends: stop reading until its buffer drained.
      from.pause()
      to.send(message, isBinary ? AS_BINARY : AS_TEXT, written)
    })
  }

  private sideClosed (side: 'client' | 'upstream', code: number, reason: string): void {
    if (side === 'upstream') this.onUpstreamGone()
    if (this.client.readyState === this.client.CLOSED && this.upstream.readyState === this.upstream.CLOSED) {
      this.finish()
      return
    }
    if (this.ending) return
    if (side === 'client') {
      this.ending = true
      clearTimeout(this.deadlineTimer)
      this.events.closed(this, code)
      closeSide(this.upstream, sendable(code) ? code : code === 1005 ? 1000 : 1001, reason)
    } else {
      this.end(sendable(code) ? code : code === 1005 ? 1000 : 1014, reason)
    }
  }

  /** A message over the limit (1009), or a broken frame (1002): ws closes that side with the code; the other follows. */
  private sideFailed (error: Error): void {
    if (this.ending) return
    const code = (error as { code?: string }).code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH' ? 1009 : 1002
    this.end(code, code === 1009 ? 'message too big' : '')
  }

  private finish (): void {
    if (this.done) return
    this.done = true
    clearTimeout(this.deadlineTimer)
  }
}

/** One function for every connection's timer (no closure per connection): the connection is the timer's argument. */
function onDeadline (connection: OpenWebSocket): void {
  connection.checkDeadlines()
}

function closeSide (socket: WebSocket, code: number, reason: string): void {
  if (socket.readyState === socket.CLOSED) return
  if (socket.readyState === socket.OPEN) socket.close(code, Buffer.from(reason).subarray(0, 123).toString())
  // A peer that never answers the close frame (or a socket still connecting) is cut.
  setTimeout(() => { socket.terminate() }, CLOSE_TIMEOUT_MS).unref()
}
