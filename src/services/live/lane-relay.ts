import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http'
import { PassThrough, Transform, type TransformCallback } from 'node:stream'
import type { Dispatcher, Pool } from 'undici'
import type { LaneConfig } from '../../config/types.js'
import { GatewayError } from '../../errors/gateway-error.js'
import { readUpstreamBody } from './upstream-body.js'

type LaneHeaders = Record<string, string | string[] | undefined>

/** One request to relay to a lane. */
export interface LaneRelayInput {
  /** The caller's request; its body (if it declares one) is streamed to the lane. */
  req: IncomingMessage
  /** The caller's raw response: written only once the lane's answer is known to be relayed. */
  res: ServerResponse
  lane: LaneConfig
  /** The lane's connection pool (lane-pools.ts). */
  pool: Pool
  /** Path and query on the lane (base path + checked remainder + query). */
  path: string
  /** Headers sent to the lane, already filtered (lane-headers.ts). */
  headers: Record<string, string | string[]>
  maxBodyBytes: number
  maxErrorBodyBytes: number
  /**
   * Called once, when a 1xx-3xx answer is relayed: takes the reply over from fastify (hijack) and returns the
   * caller's headers for the lane's. Returning `undefined` means the caller is gone: the lane request is dropped.
   */
  takeOver: (laneHeaders: LaneHeaders) => OutgoingHttpHeaders | undefined
}

/**
 * Relays one request to a lane with undici's `dispatch` on the lane's pool, and resolves once the caller's
 * response has started (1xx-3xx: streamed on the raw response from the lane's first body byte, or its end), or
 * rejects with a catalogued error while nothing has been written to the caller yet: a lane 4xx/5xx
 * (`upstream_error` with its status and a bounded, decoded body), a lane that cannot be reached or breaks off
 * before its first body byte (502), or no answer within `response_timeout_ms` (504, waiting for one of the lane's
 * connections included). Once streaming, a lane that breaks off or stalls destroys the caller's connection, so a
 * cut response never looks complete (F7); a caller that goes away aborts the lane request (F8).
 *
 * This replaced `http.request` on a keep-alive agent, which in turn replaced http-proxy-3: each step roughly
 * halved the gateway's CPU per relayed GET (docs/performance.md).
 */
export function relayToLane (input: LaneRelayInput): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const relay = new LaneRelay(input, resolve, reject)
    input.pool.dispatch({
      path: input.path,
      method: input.req.method ?? 'GET',
      headers: input.headers,
      body: relay.requestBody(),
      // Writes are never sent twice, even when a kept-alive connection turns out to be closed.
      idempotent: input.req.method === 'GET' || input.req.method === 'HEAD',
    }, relay)
  })
}

/** The dispatch handler of one relayed request (undici's DispatchHandler). */
class LaneRelay implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined
  /** The outcome was given to the route handler: resolved (relaying) or rejected (error answered by fastify). */
  private settled = false
  private streaming = false
  private complete = false
  private bodyTooLarge = false
  private waitingForDrain = false
  private status = 0
  private laneHeaders: LaneHeaders = {}
  private errorBody: PassThrough | undefined
  private readonly timer: NodeJS.Timeout

  constructor (
    private readonly input: LaneRelayInput,
    private readonly resolve: () => void,
    private readonly reject: (error: GatewayError) => void,
  ) {
    this.timer = setTimeout(() => { this.fail(new GatewayError('upstream_timeout')) }, input.lane.response_timeout_ms)
    input.res.once('close', () => { this.callerClosed() })
  }

  /** The caller's body for the lane, counted against `max_body_bytes`, or null when the request declares none. */
  requestBody (): ByteLimit | null {
    const { req } = this.input
    // A request that declares no body (no Content-Length above 0, no Transfer-Encoding: node's parser then reads
    // none) sends none; only a body is counted against the limit.
    if (!hasBody(req)) return null
    const limited = new ByteLimit(this.input.maxBodyBytes)
    limited.on('error', () => {
      this.bodyTooLarge = true
      this.fail(new GatewayError('payload_too_large'))
    })
    req.on('error', () => { limited.destroy() })
    return req.pipe(limited)
  }

  onRequestStart (controller: Dispatcher.DispatchController): void {
    this.controller = controller
    // Timed out or abandoned while waiting for one of the lane's connections: never sent.
    if (this.settled) controller.abort(new GatewayError('upstream_timeout'))
  }

  onResponseStart (controller: Dispatcher.DispatchController, statusCode: number, headers: LaneHeaders): void {
    if (statusCode < 200 && statusCode >= 100) return
    clearTimeout(this.timer)
    if (this.settled) {
      controller.abort(new GatewayError('upstream_timeout'))
      return
    }
    if (statusCode < 100 || statusCode > 599) {
      // fail() aborts the lane request too (after settling, so the abort's own error report is ignored).
      this.fail(new GatewayError('upstream_error', {
        message: 'The lane software answered with an invalid status.',
        fields: { upstream_status: 0, upstream_body: '' },
      }))
      return
    }
    this.status = statusCode
    if (statusCode >= 400) {
      this.collectErrorBody(controller, statusCode, headers)
      return
    }
    this.laneHeaders = headers
  }

  onResponseData (controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.errorBody !== undefined) {
      if (!this.errorBody.destroyed) this.errorBody.write(chunk)
      return
    }
    if (this.settled && !this.streaming) return
    if (!this.streaming && !this.startCaller()) return
    if (!this.input.res.write(chunk) && !this.waitingForDrain) {
      // The caller reads slower than the lane sends: stop reading the lane until the caller drained (chunks
      // the lane's parser already holds may still arrive meanwhile; they are buffered, not waited for twice).
      this.waitingForDrain = true
      controller.pause()
      this.input.res.once('drain', () => {
        this.waitingForDrain = false
        controller.resume()
      })
    }
  }

  onResponseEnd (): void {
    this.complete = true
    if (this.errorBody !== undefined) {
      this.errorBody.end()
      return
    }
    if (this.settled && !this.streaming) return
    if (!this.streaming && !this.startCaller()) return
    this.input.res.end()
  }

  onResponseError (_controller: Dispatcher.DispatchController, error: Error): void {
    clearTimeout(this.timer)
    if (this.streaming) {
      // Part of the body is out: the caller must see a cut connection, never a complete-looking response.
      this.input.res.destroy()
      return
    }
    if (this.errorBody !== undefined) {
      this.errorBody.destroy(error)
      return
    }
    this.fail(this.bodyTooLarge ? new GatewayError('payload_too_large') : laneFailure(error, this.status !== 0))
  }

  /** Writes the caller's status and headers; false when the caller is gone (the lane request is then dropped). */
  private startCaller (): boolean {
    const headers = this.input.takeOver(this.laneHeaders)
    if (headers === undefined || this.input.res.destroyed) {
      this.settled = true
      this.controller?.abort(new GatewayError('upstream_error', { message: 'The caller closed the connection.' }))
      this.resolve()
      return false
    }
    this.settled = true
    this.streaming = true
    this.input.res.writeHead(this.status, headers)
    this.resolve()
    return true
  }

  /** A lane 4xx/5xx: read a bounded, decoded part of its body, then answer `upstream_error` with the lane's status. */
  private collectErrorBody (controller: Dispatcher.DispatchController, status: number, headers: LaneHeaders): void {
    const body = new PassThrough()
    this.errorBody = body
    body.on('close', () => {
      // Truncated (or broken off): the rest of the lane's body is not read.
      if (!this.complete) controller.abort(new GatewayError('upstream_error'))
    })
    void readUpstreamBody(body, headers['content-encoding'], this.input.maxErrorBodyBytes).then((text) => {
      this.fail(new GatewayError('upstream_error', {
        message: `The lane software answered ${status}.`,
        fields: { upstream_status: status, upstream_body: text },
      }).withStatus(status))
    })
  }

  private callerClosed (): void {
    if (this.complete) return
    // The caller went away: nobody is left to answer, so the lane request is dropped (F8).
    if (this.settled) this.controller?.abort(new GatewayError('upstream_error', { message: 'The caller closed the connection.' }))
    else this.fail(new GatewayError('upstream_error', { message: 'The caller closed the connection.' }))
  }

  private fail (error: GatewayError): void {
    if (this.settled) return
    this.settled = true
    clearTimeout(this.timer)
    this.controller?.abort(error)
    this.reject(error)
  }
}

function hasBody (req: IncomingMessage): boolean {
  const length = req.headers['content-length']
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0')
}

/**
 * What a lane failure before the caller's response started means for the caller: no connection in time or no
 * answer in time is 504; a lane that could not be reached, or closed the connection, is 502 without a lane
 * status. Messages never name the lane's address; the cause is kept for the log.
 */
function laneFailure (cause: Error, answered: boolean): GatewayError {
  const code = (cause as { code?: string }).code
  if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT') {
    return new GatewayError('upstream_timeout', { cause })
  }

  const closed = answered || code === 'UND_ERR_SOCKET' || code === 'ECONNRESET' || code === 'EPIPE' || code === 'UND_ERR_BODY_TIMEOUT'
  const message = answered
    ? 'The lane software closed the connection while answering.'
    : closed
      ? 'The lane software closed the connection before answering.'
      : 'The lane software could not be reached.'
  return new GatewayError('upstream_error', { message, fields: { upstream_status: 0, upstream_body: '' }, cause })
}

/** Passes a body through while counting it; crossing the limit is an error (the relay answers 413). */
class ByteLimit extends Transform {
  private seen = 0
  constructor (private readonly limit: number) {
    super()
  }

  override _transform (chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.seen += chunk.length
    if (this.seen > this.limit) {
      callback(new GatewayError('payload_too_large'))
      return
    }
    callback(null, chunk)
  }
}
