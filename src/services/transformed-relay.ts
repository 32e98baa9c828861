import type { FastifyReply, FastifyRequest } from 'fastify'
import type { OutgoingHttpHeaders } from 'node:http'
import type { Dispatcher } from 'undici'
import { GatewayError } from '../plugin/gateway-error.js'
import { traceOf } from '../observability/trace-context.js'
import type { BodyPhase } from '../plugin/body-phase.js'
import type { ReplacedAnswer, UpstreamAnswer } from '../plugin/body-hook.js'
import type { ResponseBodyHooks } from '../plugin/response-phase.js'
import { callUpstream } from '../upstream/call.js'
import { TRUNCATED_MARKER } from '../upstream/error-body.js'
import { mirroredError } from '../upstream/failure.js'
import { relayedResponseHeaders, upstreamRequestHeaders } from '../upstream/headers.js'
import { hasBody, h2StreamOf } from '../upstream/request-body.js'
import type { Upstream } from '../upstream/upstream.js'
import { readRequestBody } from '../plugin/body-phase.js'

/** Headers the gateway computes for an answer it rebuilt from the upstream's: never copied from the upstream. */
const REBUILT = ['content-length', 'content-encoding', 'transfer-encoding', 'etag', 'content-md5']

/**
 * A relayed request whose answer body a policy takes whole (`context.onResponseBody`, body-phase.ts): the request
 * body (the one a policy set, else the caller's, read up to `max_body_bytes`: larger is 413) is sent through the
 * upstream engine in one call (balancing, retry of idempotent methods, failures as `upstream_error`), the answer is
 * read up to the hooks' bound (larger: 502 `upstream_failure: too_large`, read no further), the hooks run in chain
 * order, and the result is sent as the gateway's own answer (fastify's reply: the head hooks run over it).
 */
export async function relayWithBodyHooks (request: FastifyRequest, reply: FastifyReply, upstream: Upstream, path: string, limits: { max_body_bytes: number, max_upstream_error_body_bytes: number }, phase: BodyPhase & { response: ResponseBodyHooks }): Promise<FastifyReply> {
  const body = phase.requestBody ?? await callerBody(request, limits.max_body_bytes)
  const headers = upstreamRequestHeaders(request.raw.headers, {
    host: '',
    clientIp: request.ip,
    requestId: String(request.id),
    credential: upstream.settings.credential,
  })
  // The hooks read the body as text: it is asked for uncompressed.
  headers['accept-encoding'] = 'identity'
  const { timeouts } = upstream.settings
  const answer = await callUpstream(upstream, {
    method: (phase.requestMethod ?? request.method) as Dispatcher.HttpMethod,
    path: phase.requestPath ?? path,
    headers: headers as Record<string, string>,
    body,
    timeoutMs: timeouts.response_ms + timeouts.body_idle_ms,
    maxBodyBytes: phase.response.maxBodyBytes,
    // A 4xx/5xx body goes to the hooks too (a SOAP Fault is a 500), and else into `upstream_body`: read up to the
    // larger of the two bounds (a hook sees it cut, marked, when it is larger than the hooks' bound).
    maxErrorBodyBytes: Math.max(phase.response.maxBodyBytes, limits.max_upstream_error_body_bytes),
    overLimit: 'too_large',
    trace: traceOf(request.raw),
  })
  // The bytes as received: a body passed on unchanged (binary, another charset) stays what the backend sent.
  let current: UpstreamAnswer = { status: answer.status, headers: answer.headers, body: answer.bodyBytes }
  let replaced: ReplacedAnswer | undefined
  for (const hook of phase.response.hooks) {
    const result = await hook(current, request)
    if (result instanceof Error) throw result
    if (result === undefined) continue
    replaced = result
    current = { status: result.status ?? current.status, headers: current.headers, body: Buffer.isBuffer(result.body) ? result.body : Buffer.from(result.body) }
  }
  if (replaced === undefined && answer.status >= 400) {
    throw mirroredError(upstream.settings.label, answer.status, cutErrorBody(answer.body, limits.max_upstream_error_body_bytes))
  }
  return sendAnswer(request, reply, answer.headers, current, replaced?.headers)
}

/** The caller's own body, read whole up to the route's limit (413 past it), or undefined when it sent none. */
async function callerBody (request: FastifyRequest, limit: number): Promise<Buffer | undefined> {
  if (!hasBody(request.raw.headers, h2StreamOf(request.raw))) return undefined
  const body = await readRequestBody(request, limit)
  if (body === undefined) throw new GatewayError('payload_too_large')
  return body
}

/** A failing upstream's body as `upstream_body` keeps it: at most `limit` bytes, marked when cut. */
function cutErrorBody (text: string, limit: number): string {
  const bytes = Buffer.from(text)
  return bytes.length <= limit ? text : bytes.subarray(0, limit).toString('utf8') + TRUNCATED_MARKER
}

function sendAnswer (request: FastifyRequest, reply: FastifyReply, upstreamHeaders: UpstreamAnswer['headers'], answer: UpstreamAnswer, set: Readonly<Record<string, string>> | undefined): FastifyReply {
  const headers: OutgoingHttpHeaders = relayedResponseHeaders(upstreamHeaders as Record<string, string | string[] | undefined>)
  for (const name of REBUILT) if (name in headers) delete headers[name]
  if (set !== undefined) for (const name in set) headers[name.toLowerCase()] = set[name]
  headers['x-request-id'] = String(request.id)
  return reply.code(answer.status).headers(headers).send(answer.body)
}
