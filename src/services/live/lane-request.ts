import http, { type Agent, type ClientRequest, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http'
import https from 'node:https'
import { Transform, type TransformCallback } from 'node:stream'
import type { LaneConfig } from '../../config/types.js'
import { GatewayError } from '../../errors/gateway-error.js'

/** One request to relay to a lane. */
export interface RelayInput {
  /** The caller's request; its body (if it declares one) is streamed to the lane. */
  req: IncomingMessage
  /** The caller's response, watched only to drop the lane request when the caller goes away. */
  res: ServerResponse
  lane: LaneConfig
  /** The lane's keep-alive agent (lane-agents.ts). */
  agent: Agent
  /** The lane URL (base path + checked remainder + query). */
  target: URL
  /** Headers sent to the lane, already filtered (lane-headers.ts). */
  headers: OutgoingHttpHeaders
  maxBodyBytes: number
}

/** The answer of a lane: its response (headers received, body unread) and the request it answers. */
export interface RelayResponse {
  response: IncomingMessage
  upstream: ClientRequest | undefined
}

/**
 * Opens the lane request with a plain `http.request` on the lane's keep-alive agent and resolves with the lane's
 * response once its headers arrive, or rejects with a catalogued error before anything was sent to the caller.
 * Nothing is relayed here: the handler decides on the status first (4xx/5xx become a gateway error), and only
 * then streams a 1xx-3xx answer itself. This replaced an http-proxy-3 relay (`selfHandleResponse` into a
 * PassThrough and `reply.send`), which cost about twice the gateway CPU per relayed GET (bench: live-proxy).
 *
 * Timeouts: a connect timer on a new socket (`connect_timeout_ms`) and a timer from the start of the request to
 * the lane's response headers (`response_timeout_ms`, which includes waiting for one of the lane's sockets) both
 * answer 504; once the lane answered, the same `response_timeout_ms` bounds every silence in its body.
 */
export function requestLane (input: RelayInput): Promise<RelayResponse> {
  return new Promise<RelayResponse>((resolve, reject) => {
    const { req, res, lane } = input
    const client = input.target.protocol === 'https:' ? https : http
    let settled = false
    const upstream: ClientRequest = client.request(input.target, {
      method: req.method,
      headers: input.headers,
      agent: input.agent,
      setHost: false,
    })

    const fail = (error: GatewayError): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      upstream.destroy()
      reject(error)
    }
    const timer = setTimeout(() => fail(new GatewayError('upstream_timeout')), lane.response_timeout_ms)

    upstream.on('socket', function watchConnect (socket) {
      if (!socket.connecting) return
      const connectTimer = setTimeout(() => fail(new GatewayError('upstream_timeout')), lane.connect_timeout_ms)
      socket.once('connect', () => clearTimeout(connectTimer))
      socket.once('close', () => clearTimeout(connectTimer))
    })
    upstream.on('error', (error) => fail(unreachable(error)))
    upstream.on('response', function laneAnswered (response) {
      if (settled) {
        response.destroy()
        return
      }
      settled = true
      clearTimeout(timer)
      // From here on, a silent lane is cut off: the caller's response is then aborted, never left hanging.
      upstream.setTimeout(lane.response_timeout_ms, function laneBodyStalled (this: ClientRequest) {
        this.destroy()
      })
      resolve({ response, upstream })
    })
    // The caller went away before the lane answered: nobody is left to answer, so the lane request is dropped (F8).
    res.once('close', function callerGone () {
      if (!settled) fail(new GatewayError('upstream_error', { message: 'The caller closed the connection.' }))
    })

    // A request that declares no body (no Content-Length above 0, no Transfer-Encoding: node's parser then
    // reads none) is ended at once; only a body is counted against the limit.
    if (!hasBody(req)) {
      upstream.end()
      return
    }
    const limited = new ByteLimit(input.maxBodyBytes)
    limited.on('error', () => fail(new GatewayError('payload_too_large')))
    req.on('error', () => upstream.destroy())
    req.pipe(limited).pipe(upstream)
  })
}

function hasBody (req: IncomingMessage): boolean {
  const length = req.headers['content-length']
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0')
}

/** A lane that could not be reached or dropped the connection before answering: 502 without a lane status. */
function unreachable (cause: unknown): GatewayError {
  const code = (cause as { code?: string }).code
  const message = code === 'ECONNRESET' || code === 'EPIPE'
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
