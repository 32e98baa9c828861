import type { IncomingMessage } from 'node:http'
import type { EventEmitter } from 'node:events'
import type { Duplex } from 'node:stream'
import { TLSSocket } from 'node:tls'

/**
 * Whether an upgrade request is one the gateway may upgrade: `Upgrade: websocket` on a request that declares no
 * body (a handshake never has one, RFC 6455 §4.1; its other rules are the WebSocket route's to check). Anything
 * else (h2c — never done on plaintext —, any other protocol, a request with a body) is an ordinary request that
 * happens to carry an `Upgrade` header.
 */
export function isWebSocketUpgrade (req: IncomingMessage): boolean {
  const upgrade = req.headers.upgrade
  if (typeof upgrade !== 'string' || upgrade.toLowerCase() !== 'websocket') return false
  const length = req.headers['content-length']
  return req.headers['transfer-encoding'] === undefined && (length === undefined || length === '0')
}

/**
 * Serves an upgrade request the gateway does not upgrade as the plain HTTP request it also is, body included.
 *
 * Node's parser stops at the head of any request with `Connection: upgrade` when the server has an `upgrade`
 * listener: the request object never gets its body (it stays in `head` and on the socket), so relaying it lost
 * the body or waited for it forever. Here the head is written back in front of the unread bytes, without the
 * `Upgrade` header and the `upgrade` token of `Connection` (the other tokens stay, so the headers they name are
 * still dropped as hop-by-hop), and the socket is handed to the server's own connection listener again: a fresh
 * parser reads the request, its body (Content-Length or chunked) and whatever follows on a kept-alive connection,
 * under the server's usual limits and timeouts.
 */
export function serveAsPlainRequest (server: EventEmitter, req: IncomingMessage, socket: Duplex, head: Buffer): void {
  const lines = [`${req.method ?? 'GET'} ${req.url ?? '/'} HTTP/${req.httpVersion}`]
  const raw = req.rawHeaders
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i] as string
    const value = raw[i + 1] as string
    const lower = name.toLowerCase()
    if (lower === 'upgrade') continue
    if (lower === 'connection') {
      const kept = value.split(',').map((token) => token.trim()).filter((token) => token !== '' && token.toLowerCase() !== 'upgrade')
      if (kept.length > 0) lines.push(`${name}: ${kept.join(', ')}`)
      continue
    }
    lines.push(`${name}: ${value}`)
  }
  // Header strings come from the parser byte for byte (latin1): written back the same way.
  socket.unshift(Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), head]))
  // An https (or HTTP/2 with HTTP/1.1 fallback) server listens for `secureConnection`, a plain one for `connection`.
  server.emit(socket instanceof TLSSocket ? 'secureConnection' : 'connection', socket)
}
