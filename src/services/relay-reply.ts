import type { FastifyReply, FastifyRequest } from 'fastify'
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http'
import { GatewayError } from '../plugin/gateway-error.js'
import { markLongLived } from '../observability/long-lived.js'
import { traceOf } from '../observability/trace-context.js'
import { captureRelayedChunk, responseHooksOf, runRelayedHeadHooks, type ResponseHooks } from '../plugin/response-phase.js'
import { relayedResponseHeaders } from '../upstream/headers.js'
import type { UpstreamTrace } from '../upstream/headers.js'
import { startRelay, type RelayCaller, type UpstreamHeaders } from '../upstream/relay.js'
import type { Upstream } from '../upstream/upstream.js'
import { relayWithBodyHooks } from './transformed-relay.js'

/** The body limits of a relaying service (`max_body_bytes`, `max_upstream_error_body_bytes`). */
export interface RelayLimits {
  max_body_bytes: number
  max_upstream_error_body_bytes: number
}

/**
 * Relays the caller's request to `upstream` at `path` (already checked by the service's path rules) and streams
 * the answer back: the live proxy's and the proxy service's handler body. A declared body over the limit is a 413
 * before the upstream is contacted; the engine sends the request's trace context and counts the relay in
 * lanegate_upstream_* under the upstream's registry key. Returns nothing (the relay answers through `reply` once
 * it settles: the route's handler returns no promise), or a promise when a policy reads the answer whole.
 */
export function relayCallerRequest (request: FastifyRequest, reply: FastifyReply, upstream: Upstream, path: string, limits: RelayLimits): Promise<FastifyReply> | undefined {
  const declared = Number(request.headers['content-length'] ?? 0)
  if (declared > limits.max_body_bytes) throw new GatewayError('payload_too_large')
  // The chain has run: a request with response hooks may have its relayed body copied for them (`captureBody`).
  const hooks = responseHooksOf(request)
  // A policy that reads the answer whole (`onResponseBody`) gets it from a buffered call instead of the stream.
  if (hooks?.body !== undefined) return relayWithBodyHooks(request, reply, upstream, path, limits, { requestBody: hooks.requestBody, requestMethod: hooks.requestMethod, requestPath: hooks.requestPath, response: hooks.body })
  startRelay(upstream, new ReplyRelay(request, reply, path, limits, hooks))
  return undefined
}

/** One relayed request, told to the engine as one object: its fields, its take-over and how it settled. */
class ReplyRelay implements RelayCaller {
  readonly req: IncomingMessage
  readonly res: ServerResponse
  readonly clientIp: string
  readonly requestId: string
  readonly trace: UpstreamTrace
  readonly maxBodyBytes: number
  readonly maxErrorBodyBytes: number
  readonly body: Buffer | undefined
  readonly method: string | undefined
  readonly observeChunk: ((chunk: Buffer) => void) | undefined

  constructor (private readonly request: FastifyRequest, private readonly reply: FastifyReply, readonly path: string, limits: RelayLimits, private readonly hooks: ResponseHooks | undefined) {
    this.req = request.raw
    this.res = reply.raw
    this.clientIp = request.ip
    this.requestId = String(request.id)
    this.trace = traceOf(request.raw)
    this.maxBodyBytes = limits.max_body_bytes
    this.maxErrorBodyBytes = limits.max_upstream_error_body_bytes
    this.body = hooks?.requestBody
    this.method = hooks?.requestMethod
    this.observeChunk = hooks === undefined ? undefined : function copyChunk (chunk) { captureRelayedChunk(hooks, chunk) }
  }

  takeOver (upstreamHeaders: UpstreamHeaders, status: number, eventStream: boolean): OutgoingHttpHeaders | undefined {
    return takeOverReplyHeaders(this.request, this.reply, upstreamHeaders, status, eventStream, this.hooks)
  }

  /** A failure is answered as the route's own error (what fastify does with a handler's rejected promise). */
  settled (error: GatewayError | undefined): void {
    if (error !== undefined) this.reply.send(error)
  }
}

/**
 * The caller's headers for a relayed 1xx-3xx answer (the live proxy's and the proxy service's `takeOver`), taken
 * over from fastify (`reply.hijack()`: no serializer, no onSend hook): what the chain set (rate limits,
 * `x-request-id`, `cache-control: no-store`), overridden by the upstream's filtered headers (its own cache-control
 * included), and the request id again; then the response phase's head hooks the chain registered (`headers`)
 * change them (`hooks`: the relay looked them up once already). `undefined` when the caller is already gone.
 */
export function takeOverReplyHeaders (request: FastifyRequest, reply: FastifyReply, upstreamHeaders: UpstreamHeaders, status: number, eventStream: boolean, hooks = responseHooksOf(request)): OutgoingHttpHeaders | undefined {
  // getHeaders() is a fresh object (fastify copies its own and the raw response's), so it is filled in place.
  const headers = reply.getHeaders() as OutgoingHttpHeaders
  for (const name in headers) if (headers[name] === undefined) delete headers[name]
  relayedResponseHeaders(upstreamHeaders, headers)
  headers['x-request-id'] = String(request.id)
  if (hooks !== undefined) runRelayedHeadHooks(hooks, request, status, headers)
  reply.hijack()
  // An event stream stays open for minutes: timed apart from request latency (the relay read its head once).
  if (eventStream) markLongLived(reply.raw)
  return reply.raw.destroyed ? undefined : headers
}
