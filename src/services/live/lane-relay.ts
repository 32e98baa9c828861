import type { Agent, ClientRequest, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { Transform, type TransformCallback } from 'node:stream'
import { ProxyServer } from 'http-proxy-3'
import type { LaneConfig } from '../../config/types.js'
import { GatewayError } from '../../errors/gateway-error.js'

/** One request being relayed: what the proxy's events need to find it again. */
interface RelayState {
  readonly lane: LaneConfig
  settled: boolean
  upstream?: ClientRequest
  timer?: NodeJS.Timeout
  resolve (response: IncomingMessage): void
  reject (error: GatewayError): void
}

export interface RelayInput {
  req: IncomingMessage
  res: ServerResponse
  lane: LaneConfig
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
 * Relays requests to lanes with http-proxy-3, but keeps every decision here: the proxy only opens the upstream
 * request and pipes the caller's body into it (`selfHandleResponse`), and `relay()` resolves with the lane's
 * response once its headers arrive or rejects with a catalogued error before anything was sent to the caller.
 *
 * Timeouts are ours, not http-proxy's (which reports its own as a bare ECONNRESET): a connect timer on a new
 * socket (`connect_timeout_ms`) and a timer from the start of the relay to the lane's response headers
 * (`response_timeout_ms`, which includes waiting for one of the lane's sockets) both answer 504; once the lane
 * answered, the same `response_timeout_ms` bounds every silence in its body.
 */
export class LaneRelay {
  private readonly proxy = new ProxyServer()
  private readonly states = new WeakMap<IncomingMessage, RelayState>()

  constructor () {
    this.proxy.on('proxyReq', (upstream, req, _res, _options, socket) => this.onUpstream(upstream, req, socket))
    this.proxy.on('proxyRes', (response, req) => this.onResponse(response, req))
    // The caller went away and http-proxy destroyed the upstream request: nobody is left to answer.
    this.proxy.on('econnreset', (error, req) => this.fail(req, new GatewayError('upstream_error', { cause: error })))
    this.proxy.on('error', (error, req) => this.fail(req, unreachable(error)))
  }

  relay (input: RelayInput): Promise<RelayResponse> {
    return new Promise<IncomingMessage>((resolve, reject) => {
      const { req, lane } = input
      const state: RelayState = { lane, settled: false, resolve, reject }
      this.states.set(req, state)
      state.timer = setTimeout(() => this.fail(req, timeout()), lane.response_timeout_ms)

      // A request that declares no body (no Content-Length above 0, no Transfer-Encoding: node's parser then
      // reads none) is piped as it is; only a body is counted against the limit.
      let body: IncomingMessage | ByteLimit = req
      if (hasBody(req)) {
        const limited = new ByteLimit(input.maxBodyBytes)
        limited.on('error', () => this.fail(req, new GatewayError('payload_too_large')))
        req.pipe(limited)
        body = limited
      }
      // http-proxy copies `req.headers` into the upstream request; handing it the filtered set is the only way
      // to remove headers before they are written (its proxyReq event may come after the first body chunk).
      ;(req as { headers: unknown }).headers = input.headers

      this.proxy.web(req, input.res, {
        target: input.target,
        agent: input.agent,
        ignorePath: true,
        selfHandleResponse: true,
        buffer: body,
        xfwd: false,
        changeOrigin: false,
        followRedirects: false,
      }, (error) => this.fail(req, unreachable(error)))
    }).then((response) => ({ response, upstream: this.states.get(input.req)?.upstream }))
  }

  private onUpstream (upstream: ClientRequest, req: IncomingMessage, socket: Socket): void {
    const state = this.states.get(req)
    if (state === undefined) return
    if (state.settled) {
      upstream.destroy()
      return
    }
    state.upstream = upstream
    if (socket.connecting) {
      const connectTimer = setTimeout(() => this.fail(req, timeout()), state.lane.connect_timeout_ms)
      socket.once('connect', () => clearTimeout(connectTimer))
      socket.once('close', () => clearTimeout(connectTimer))
    }
  }

  private onResponse (response: IncomingMessage, req: IncomingMessage): void {
    const state = this.states.get(req)
    if (state === undefined) return
    if (state.settled) {
      response.destroy()
      return
    }
    state.settled = true
    clearTimeout(state.timer)
    // From here on, a silent lane is cut off: the caller's response is then aborted, never left hanging.
    state.upstream?.setTimeout(state.lane.response_timeout_ms, function laneBodyStalled (this: ClientRequest) {
      this.destroy()
    })
    state.resolve(response)
  }

  private fail (req: IncomingMessage, error: GatewayError): void {
    const state = this.states.get(req)
    if (state === undefined || state.settled) return
    state.settled = true
    clearTimeout(state.timer)
    state.upstream?.destroy()
    state.reject(error)
  }

  /** Closes the proxy's listeners (the agents are closed by their owner). */
  close (): void {
    this.proxy.removeAllListeners()
    this.proxy.on('error', () => {})
  }
}

function hasBody (req: IncomingMessage): boolean {
  const length = req.headers['content-length']
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0')
}

function timeout (): GatewayError {
  return new GatewayError('upstream_timeout')
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
