import { constants, Http2ServerRequest } from 'node:http2'
import type { FastifyInstance } from 'fastify'
import { renderError } from '../errors/envelopes.js'
import { GatewayError } from '../plugin/gateway-error.js'

/**
 * `server.request_timeout_ms` for HTTP/2 streams. Node enforces `requestTimeout` on HTTP/1.1 connections only: an
 * HTTP/2 caller trickling its body was stopped by nothing but the session's idle timeout, and could hold a relayed
 * upstream connection for as long as it kept sending a byte now and then. Each HTTP/2 request with a body gets the
 * same whole-request budget as HTTP/1.1: a body not complete in time is answered 408 `request_timeout` in the plain
 * envelope (as HTTP/1.1's client-error handler answers it) when nothing was sent yet, and the stream is cancelled.
 * A request without a body (END_STREAM on its headers) costs nothing.
 */
export function addHttp2RequestTimeout (app: FastifyInstance, timeoutMs: number): void {
  app.addHook('onRequest', function http2RequestTimeout (request, reply, done) {
    // The listener serves HTTP/1.1 beside h2: those requests have Node's own timeout already.
    const raw = request.raw
    if (!(raw instanceof Http2ServerRequest) || raw.stream.endAfterHeaders) {
      done()
      return
    }
    const stream = raw.stream
    const timer = setTimeout(function requestTimedOut () {
      if (raw.complete || stream.destroyed) return
      request.log.info({ timeout_ms: timeoutMs }, 'HTTP/2 request body not received within server.request_timeout_ms: 408')
      if (!stream.headersSent) {
        const body = JSON.stringify(renderError(new GatewayError('request_timeout'), 'plain'))
        reply.hijack()
        stream.respond({ ':status': 408, 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'content-length': Buffer.byteLength(body) })
        stream.end(body, () => stream.close(constants.NGHTTP2_CANCEL))
      } else {
        stream.close(constants.NGHTTP2_CANCEL)
      }
    }, timeoutMs)
    stream.once('close', function requestStreamClosed () { clearTimeout(timer) })
    done()
  })
}
