import { STATUS_CODES } from 'node:http'
import type { Server, Socket } from 'node:net'
import { renderError } from '../errors/envelopes.js'
import { GatewayError } from '../plugin/gateway-error.js'

/** A TLS record starts with its content type (22: handshake); an HTTP/1 request with a method token's letter. */
const FIRST_LETTER = /^[A-Z]$/

/**
 * On the TLS listener, plain HTTP (`curl http://…` to the HTTPS port) is answered 400 "plain HTTP sent to the
 * HTTPS port" in the plain envelope, as nginx does, instead of a TLS alert the client shows as an empty reply.
 * The first bytes of each connection are read before TLS sees them: a request line's first letter is answered and
 * the connection closed; anything else (a ClientHello) is put back and handed to the TLS server's own connection
 * listener, which reads it as if nothing had happened. A connection that sends nothing within `firstByteMs` is
 * closed, as the TLS handshake timeout would have. `server` is the TLS listener (any net.Server: only its
 * `connection` listeners are used).
 */
export function refusePlainHttp (server: Server, firstByteMs: number): void {
  const tlsListeners = server.listeners('connection') as Array<(socket: Socket) => void>
  server.removeAllListeners('connection')
  server.on('connection', function peekFirstByte (socket: Socket) {
    const ignore = (): void => {}
    socket.on('error', ignore)
    socket.setTimeout(firstByteMs, () => socket.destroy())
    socket.once('data', function firstBytes (chunk: Buffer) {
      socket.pause()
      socket.setTimeout(0)
      socket.removeListener('error', ignore)
      if (FIRST_LETTER.test(String.fromCharCode(chunk[0] ?? 0))) {
        answerPlainHttp(socket)
        return
      }
      socket.unshift(chunk)
      for (const listener of tlsListeners) listener.call(server, socket)
    })
  })
}

function answerPlainHttp (socket: Socket): void {
  socket.on('error', () => {})
  const error = new GatewayError('bad_request', { message: 'plain HTTP sent to the HTTPS port: use https://' })
  const body = JSON.stringify(renderError(error, 'plain'))
  socket.end(`HTTP/1.1 400 ${STATUS_CODES[400]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
    `Content-Type: application/json; charset=utf-8\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`)
}
