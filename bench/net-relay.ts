import { connect, createServer, type Server, type Socket } from 'node:net'
import { parseResponseHead, type BodyFraming } from './net-framing.js'

/**
 * The raw-`net` floor of the live proxy (peer `net-floor`): a minimal HTTP/1.1 relay of body-less GETs on `net`
 * sockets, with no HTTP library on either side. It parses the request head, drops what lanegate drops before its
 * upstream (the caller's token, host, hop-by-hop), forwards the head on a kept-alive socket to the lane and streams
 * the answer's bytes back unchanged, framed by Content-Length or chunked coding. What a Node relay cannot go below.
 */

const HEAD_END = Buffer.from('\r\n\r\n')
const MAX_HEAD_BYTES = 64 * 1024
const DROPPED = new Set(['authorization', 'host', 'connection', 'keep-alive', 'proxy-connection', 'te', 'upgrade'])
const NOT_IMPLEMENTED = 'HTTP/1.1 501 Not Implemented\r\ncontent-length: 0\r\nconnection: close\r\n\r\n'
const BAD_GATEWAY = 'HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\nconnection: close\r\n\r\n'

/** The upstream's head of a client's request head, and whether the client asked to close; undefined: not a body-less GET. */
export function upstreamRequestHead (head: string, targetHost: string): { head: string, close: boolean } | undefined {
  const lines = head.split('\r\n')
  const requestLine = lines[0] ?? ''
  if (!requestLine.startsWith('GET ') || !requestLine.endsWith(' HTTP/1.1')) return undefined
  let out = `${requestLine}\r\nhost: ${targetHost}\r\n`
  let close = false
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i] as string
    if (line === '') continue
    const name = line.slice(0, line.indexOf(':')).trim().toLowerCase()
    if (name === 'content-length' ? Number(line.slice(line.indexOf(':') + 1)) !== 0 : name === 'transfer-encoding') return undefined
    if (name === 'connection' && line.toLowerCase().includes('close')) close = true
    if (!DROPPED.has(name)) out += `${line}\r\n`
  }
  return { head: `${out}\r\n`, close }
}

/** One kept-alive socket to the lane, carrying one exchange at a time. */
class LaneSocket {
  private client: Socket | undefined
  private pending: Buffer | undefined
  private framing: BodyFraming | undefined
  private reusable = false
  private sentAny = false
  private done: ((reusable: boolean) => void) | undefined

  constructor (readonly socket: Socket, private readonly onGone: (lane: LaneSocket) => void) {
    socket.setNoDelay(true)
    socket.on('data', (chunk: Buffer) => this.onData(chunk))
    socket.on('error', () => socket.destroy())
    socket.on('close', () => this.onClose())
  }

  /** Sends `head` and streams the answer to `client`; `done` when it ended (`reusable`: the socket may carry another). */
  exchange (head: string, client: Socket, done: (reusable: boolean) => void): void {
    this.client = client
    this.done = done
    this.sentAny = false
    this.socket.write(head, 'latin1')
  }

  private onData (chunk: Buffer): void {
    const client = this.client
    if (client === undefined) {
      this.socket.destroy()
      return
    }
    let from = 0
    if (this.framing === undefined) {
      const bytes = this.pending === undefined ? chunk : Buffer.concat([this.pending, chunk])
      const at = bytes.indexOf(HEAD_END)
      if (at === -1) {
        this.pending = bytes
        return
      }
      this.pending = undefined
      const head = parseResponseHead(bytes.toString('latin1', 0, at))
      this.framing = head.framing
      this.reusable = head.keepAlive
      chunk = bytes
      from = at + HEAD_END.length
    }
    const end = this.framing.consume(chunk, from)
    this.forward(client, end === -1 ? chunk : chunk.subarray(0, end))
    if (end !== -1) this.finish(this.reusable && end === chunk.length)
  }

  private forward (client: Socket, bytes: Buffer): void {
    this.sentAny = true
    if (!client.destroyed) client.write(bytes)
  }

  private finish (reusable: boolean): void {
    const done = this.done
    this.client = undefined
    this.done = undefined
    this.framing = undefined
    if (!reusable) this.socket.destroy()
    done?.(reusable)
  }

  private onClose (): void {
    this.onGone(this)
    const client = this.client
    if (client === undefined) return
    if (this.framing?.untilClose === true) {
      this.finish(false)
      return
    }
    // Cut short: a client that got nothing is told so, one that got part of an answer loses its connection.
    if (!this.sentAny && !client.destroyed) client.end(BAD_GATEWAY)
    else client.destroy()
    this.finish(false)
  }
}

/** The lane's idle sockets: one is taken per exchange (a new one when none is idle) and given back when it ends. */
class LanePool {
  private readonly idle: LaneSocket[] = []

  constructor (private readonly port: number, private readonly host: string) {}

  exchange (head: string, client: Socket, done: () => void): void {
    const lane = this.idle.pop() ?? new LaneSocket(connect(this.port, this.host), (gone) => this.forget(gone))
    lane.exchange(head, client, (reusable) => {
      if (reusable) this.idle.push(lane)
      done()
    })
  }

  private forget (lane: LaneSocket): void {
    const at = this.idle.indexOf(lane)
    if (at !== -1) this.idle.splice(at, 1)
  }
}

/** One client connection: its requests are taken one at a time, in order (a pipelined one waits its turn). */
function serveClient (client: Socket, pool: LanePool, targetHost: string): void {
  client.setNoDelay(true)
  let buffered: Buffer | undefined
  let busy = false
  const next = (): void => {
    if (busy || buffered === undefined) return
    const at = buffered.indexOf(HEAD_END)
    if (at === -1) {
      if (buffered.length > MAX_HEAD_BYTES) client.destroy()
      return
    }
    const request = upstreamRequestHead(buffered.toString('latin1', 0, at + 2), targetHost)
    buffered = at + HEAD_END.length === buffered.length ? undefined : buffered.subarray(at + HEAD_END.length)
    if (request === undefined) {
      client.end(NOT_IMPLEMENTED)
      return
    }
    busy = true
    pool.exchange(request.head, client, () => {
      busy = false
      if (request.close) client.end()
      else next()
    })
  }
  client.on('data', (chunk: Buffer) => {
    buffered = buffered === undefined ? chunk : Buffer.concat([buffered, chunk])
    next()
  })
  client.on('error', () => client.destroy())
}

/** The floor's server, relaying to `target` (http://host:port); not yet listening. */
export function createNetRelay (target: URL): Server {
  const pool = new LanePool(Number(target.port), target.hostname)
  return createServer({ noDelay: true }, (client) => serveClient(client, pool, target.host))
}
