import type { IncomingHttpHeaders, IncomingMessage } from 'node:http'
import WebSocket from 'ws'
import { GatewayError } from '../plugin/gateway-error.js'
import { readUpstreamBody } from './error-body.js'
import { failureKindOf, mirroredError, noTargetError, unreachableError } from './failure.js'
import { upstreamRequestHeaders, type UpstreamAttemptSpan, type UpstreamTrace } from './headers.js'
import { recordOutcome, upstreamFailureOutcome } from './outcome.js'
import { outcomeOfStatus } from '../observability/recorders.js'
import type { BackendTlsOptions } from './backend-tls.js'
import type { Target } from './target.js'
import type { Upstream } from './upstream.js'

/** The handshake headers the gateway's own WebSocket client writes (the caller's belong to the caller's handshake). */
const HANDSHAKE_HEADERS = ['sec-websocket-key', 'sec-websocket-version', 'sec-websocket-extensions', 'sec-websocket-protocol', 'host']

/** One upgrade to open on an upstream for a caller whose own upgrade passed the route's chain. */
export interface WebSocketConnectInput {
  /** The caller's upgrade request (its headers are filtered like a relayed request's). */
  req: IncomingMessage
  /** Path and query below the target's base path, starting with `/` (already checked, `access_token` removed). */
  path: string
  clientIp: string
  requestId: string
  trace?: UpstreamTrace
  /** Largest message the upstream may send; a larger one closes the connection with 1009. */
  maxMessageBytes: number
  /** How much of a refusing upstream's body is kept in `upstream_body`. */
  maxErrorBodyBytes: number
}

/** An open upstream WebSocket and the target it runs on (`release` once it closed: least_connections counts it). */
export interface UpstreamWebSocket {
  socket: WebSocket
  release: () => void
}

/**
 * Opens the upgrade to one target of `upstream` (picked by its balancer) with the headers a relayed request gets:
 * the caller's minus hop-by-hop, credentials and handshake headers, plus X-Forwarded-For, X-Request-Id, traceparent
 * and the upstream's credential as Authorization. The caller's subprotocols are offered as they came. Resolves once
 * the upstream answered 101; rejects with a catalogued error otherwise, nothing having been written to the caller.
 * A `wss` connection (an https target) uses the upstream's `tls:` settings exactly as its HTTP pool does
 * (Target.tlsOptions: private CA, client certificate, servername, verify):
 * - an answer other than 101: `upstream_error` with its status (4xx/5xx mirrored; any other status is a 502 with
 *   `upstream_status` set to it) and a bounded body;
 * - no answer within `connect_ms` + `response_ms`, refused, reset: 502 `upstream_error` with `upstream_failure`;
 * - every target ejected: 502 `upstream_failure: 'ejected'`; kept out by circuit breakers: 503 `circuit_open`.
 * The target's circuit breaker counts the handshake's answer (101 a success) or its failure. Each upgrade is counted
 * once in `lanegate_upstream_*` like a relayed request.
 */
export function connectUpstreamWebSocket (upstream: Upstream, input: WebSocketConnectInput): Promise<UpstreamWebSocket> {
  const { label, timeouts, credential } = upstream.settings
  const started = performance.now()
  const target = upstream.pick()
  if (target === undefined) {
    const error = noTargetError(label, upstream.circuitRetryAfter())
    recordOutcome(upstream, upstreamFailureOutcome(error), started, input.trace)
    return Promise.reject(error)
  }
  const headers = upstreamRequestHeaders(input.req.headers, {
    host: target.host,
    clientIp: input.clientIp,
    requestId: input.requestId,
    credential,
    trace: input.trace,
  })
  for (const name of HANDSHAKE_HEADERS) delete headers[name]
  let tls: BackendTlsOptions | undefined
  try {
    tls = target.tlsOptions()
  } catch (error) {
    // The upstream's TLS files never loaded: every connection to it fails as `tls`, the pool's included.
    upstream.reportFailure(target, 'tls')
    recordOutcome(upstream, 'tls', started, input.trace)
    return Promise.reject(unreachableError(label, 'tls', error))
  }
  // The handshake's CLIENT span (span export on, trace sampled): the upstream sees it as its parent; it ends at the
  // upstream's answer to the upgrade, while the session's SERVER span runs until the connection closes.
  const span = input.trace?.startAttempt?.(upstream.name, 'GET', target.url, input.path, 1)
  if (span !== undefined) headers.traceparent = span.traceparent
  const socket = new WebSocket(websocketUrl(target, input.path), offeredProtocols(input.req.headers), {
    // An https target's `tls:` settings (private CA, client certificate, servername, verify), as its pool uses them.
    ...tls,
    headers: headers as Record<string, string>,
    handshakeTimeout: timeouts.connect_ms + timeouts.response_ms,
    perMessageDeflate: false,
    followRedirects: false,
    maxPayload: input.maxMessageBytes,
    // The endpoints check their own text frames; the gateway relays them as they came.
    skipUTF8Validation: true,
  })
  target.inFlight++
  let released = false
  const release = (): void => {
    if (released) return
    released = true
    target.inFlight--
  }
  return settleHandshake(socket, upstream, target, input, started, release, span)
}

/**
 * The upstream's answer to the upgrade, settled once by whichever comes first: the upgrade (resolves), a refusal
 * (its status and bounded body), an error or the handshake timeout (rejects, the socket dropped).
 */
function settleHandshake (socket: WebSocket, upstream: Upstream, target: Target, input: WebSocketConnectInput, started: number, release: () => void, span: UpstreamAttemptSpan | undefined): Promise<UpstreamWebSocket> {
  const { label } = upstream.settings
  const epoch = target.breaker?.epoch
  return new Promise<UpstreamWebSocket>((resolve, reject) => {
    let settled = false
    const fail = (error: GatewayError): void => {
      if (settled) return
      settled = true
      release()
      socket.removeAllListeners()
      // A late error of the dropped socket must not become an uncaught one.
      socket.on('error', () => {})
      socket.terminate()
      reject(error)
    }
    socket.once('open', () => {
      if (settled) return
      settled = true
      target.recordSuccess()
      target.breaker?.recordAnswer(101, performance.now() - started, epoch)
      recordOutcome(upstream, 'ok', started, input.trace)
      span?.end({ status: 101 })
      socket.removeAllListeners('error')
      resolve({ socket, release })
    })
    socket.once('unexpected-response', (_request, response: IncomingMessage) => {
      const status = response.statusCode ?? 0
      target.recordSuccess()
      if (status >= 100 && status <= 599) target.breaker?.recordAnswer(status, performance.now() - started, epoch)
      recordOutcome(upstream, outcomeOfStatus(status), started, input.trace)
      span?.end({ status })
      void readUpstreamBody(response, response.headers['content-encoding'], input.maxErrorBodyBytes).then((body) => {
        fail(refusedUpgrade(label, status, body))
      })
    })
    socket.once('error', (error: Error) => {
      if (settled) return
      const kind = /handshake has timed out/.test(error.message) ? 'timeout' : failureKindOf(error)
      target.breaker?.recordFailure(epoch)
      upstream.reportFailure(target, kind)
      const failure = unreachableError(label, kind, error)
      // Counted as a relayed request's failure is: `timeout`, `tls` (handshake, certificate) or `unreachable`.
      recordOutcome(upstream, upstreamFailureOutcome(failure), started, input.trace)
      span?.end({ failure: kind })
      fail(failure)
    })
  })
}

/** A refused upgrade: a 4xx/5xx is mirrored; a 1xx-3xx that is not 101 (a redirect, a plain 200) is a 502. */
function refusedUpgrade (label: string, status: number, body: string): GatewayError {
  if (status >= 400 && status <= 599) return mirroredError(label, status, body)
  return new GatewayError('upstream_error', {
    message: `${label} did not accept the WebSocket upgrade (answered ${status}).`,
    fields: { upstream_status: status, upstream_body: body },
  })
}

/** `ws(s)://host[:port]<base path><path>` of a target. */
function websocketUrl (target: Target, path: string): string {
  const scheme = target.url.startsWith('https:') ? 'wss' : 'ws'
  return `${scheme}://${target.host}${target.basePath}${path}`
}

/** The caller's `Sec-WebSocket-Protocol` list, offered upstream as it came. */
function offeredProtocols (headers: IncomingHttpHeaders): string[] {
  const value = headers['sec-websocket-protocol']
  if (value === undefined) return []
  return value.split(',').map((p) => p.trim()).filter((p) => p !== '')
}
