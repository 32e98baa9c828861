import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import { GatewayError } from '../plugin/gateway-error.js'
import { renderError } from './envelopes.js'

/**
 * Answers requests that never became requests: a head too large (431), a head or body too slow (408), or bytes
 * that are not HTTP (400: request smuggling attempts such as CL+TE, obs-fold, bare CR). Written straight to the
 * socket in the plain envelope, then the connection is closed, so nothing after the bad bytes is read.
 */
export function gatewayClientErrorHandler (error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  const gwError = error.code === 'HPE_HEADER_OVERFLOW'
    ? new GatewayError('header_too_large')
    : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? new GatewayError('request_timeout')
      : new GatewayError('bad_request', { message: 'The request is not valid HTTP/1.1.' })
  const body = JSON.stringify(renderError(gwError, 'plain'))
  if (socket.writable) {
    socket.write(`HTTP/1.1 ${gwError.status} ${STATUS_CODES[gwError.status]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `Content-Type: application/json; charset=utf-8\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`)
  }
  socket.destroy()
}
