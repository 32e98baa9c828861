import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http'

/** RFC 9110 §7.6.1 hop-by-hop headers, plus the proxy-specific ones http-proxy-3 leaves in place. */
const HOP_BY_HOP = new Set([
  'connection', 'keep-alive', 'te', 'trailer', 'transfer-encoding', 'upgrade',
  'proxy-authorization', 'proxy-authenticate', 'proxy-connection',
])

/** The caller's credentials and forwarding claims never reach an upstream; the gateway sets its own. */
const REQUEST_DROP = new Set([
  'authorization', 'cookie', 'forwarded', 'x-real-ip', 'host', 'expect', 'x-request-id',
  // The gateway's own trace context replaces the caller's (observability/trace-context.ts).
  'traceparent', 'tracestate',
])

/**
 * Upstream response headers that are not relayed: credentials the upstream hands out (an upstream 401's challenge
 * would look like the gateway rejecting the caller's token), anything naming the upstream's own address (`Location` on 3xx,
 * `Content-Location`, `Refresh`, `Alt-Svc`), and software banners. `Date` comes from the gateway itself.
 */
const RESPONSE_DROP = new Set([
  'set-cookie', 'set-cookie2', 'www-authenticate', 'location', 'content-location', 'refresh', 'alt-svc',
  'server', 'x-powered-by', 'date', 'x-request-id',
])

const NOTHING_LISTED: ReadonlySet<string> = new Set()

/** Header names a `Connection` header lists are hop-by-hop for this message too. */
function connectionListed (headers: IncomingHttpHeaders): ReadonlySet<string> {
  const value = headers.connection
  // Most messages name nothing beyond keep-alive/close: no set to build per request.
  if (value === undefined || value === 'keep-alive' || value === 'close') return NOTHING_LISTED
  const listed = new Set<string>()
  for (const part of [value ?? ''].flat().join(',').split(',')) {
    const name = part.trim().toLowerCase()
    if (name !== '') listed.add(name)
  }
  return listed
}

/** W3C trace context sent upstream: the request's trace with the gateway's span as parent, and the caller's tracestate. */
export interface UpstreamTrace {
  readonly traceparent: string
  readonly tracestate: string | undefined
  /** Told once a call settles (its answer's head or its final failure), with the upstream's name and the time taken. */
  upstreamSettled? (upstream: string, seconds: number): void
  /**
   * Called before each attempt (retries included) with the target's URL and the path sent: a span for the attempt,
   * whose `traceparent` the attempt sends instead, or undefined (span export off, trace not sampled).
   */
  startAttempt? (upstream: string, method: string, targetUrl: string, path: string, attempt: number): UpstreamAttemptSpan | undefined
}

/** The span of one upstream attempt (observability/tracing): sent as the parent of the upstream's own spans. */
export interface UpstreamAttemptSpan {
  readonly traceparent: string
  /** The answer's status, or the failure kind (`upstream_failure`) when none came. */
  end (result: { status?: number, failure?: string }): void
}

export interface UpstreamRequestHeaderInput {
  /** The target's `host[:port]` from its configured URL. */
  host: string
  clientIp: string
  requestId: string
  /** The upstream's configured credential, sent as Authorization. */
  credential?: string
  /** Sent as `traceparent` (and `tracestate`); the caller's own are never forwarded as they came. */
  trace?: UpstreamTrace
}

/** Whether the caller's header `name` goes upstream: not hop-by-hop, not a credential or forwarding claim. */
function forwarded (name: string, listed: ReadonlySet<string>): boolean {
  if (HOP_BY_HOP.has(name) || REQUEST_DROP.has(name) || listed.has(name) || name.startsWith('x-forwarded-')) return false
  // An HTTP/2 caller's pseudo-headers (`:method`, `:path`, `:authority`, `:scheme`) are not HTTP/1.1 headers.
  return name.charCodeAt(0) !== 58
}

/** The headers sent upstream: the caller's, minus hop-by-hop and credentials, plus the gateway's own. */
export function upstreamRequestHeaders (incoming: IncomingHttpHeaders, input: UpstreamRequestHeaderInput): Record<string, string | string[]> {
  const listed = connectionListed(incoming)
  const out: Record<string, string | string[]> = {}
  // for…in, not Object.entries: no [name, value] array per header on every relayed request.
  for (const name in incoming) {
    const value = incoming[name]
    if (value !== undefined && forwarded(name, listed)) out[name] = value
  }
  out.host = input.host
  out['x-forwarded-for'] = input.clientIp
  out['x-request-id'] = input.requestId
  if (input.credential !== undefined) out.authorization = input.credential
  if (input.trace !== undefined) {
    out.traceparent = input.trace.traceparent
    if (input.trace.tracestate !== undefined) out.tracestate = input.trace.tracestate
  }
  return out
}

/**
 * The upstream response headers relayed to the caller (for 1xx-3xx answers; errors are rendered by the gateway),
 * written into `out` (the caller's headers so far, which they override) or a new object.
 */
export function relayedResponseHeaders (incoming: IncomingHttpHeaders, out: OutgoingHttpHeaders = {}): OutgoingHttpHeaders {
  const listed = connectionListed(incoming)
  for (const name in incoming) {
    const value = incoming[name]
    if (value === undefined) continue
    if (HOP_BY_HOP.has(name) || RESPONSE_DROP.has(name) || listed.has(name)) continue
    out[name] = value
  }
  return out
}

/** Where `upstreamRequestHeaderList` puts the value of `host` (an attempt on another target changes it there). */
export const HOST_VALUE_AT = 1

/**
 * The same headers as `upstreamRequestHeaders`, in the same order, as the flat `[name, value, …]` list undici takes
 * as it is (an object it walks through `Object.keys`); `host` comes first (undici sends it first whatever its
 * place). Read from the parsed headers, not `rawHeaders`: node already merged repeated names (the first of a
 * single-valued one, the rest joined) and lowercased the names, without a string per known name.
 */
export function upstreamRequestHeaderList (incoming: IncomingHttpHeaders, input: UpstreamRequestHeaderInput): string[] {
  const listed = connectionListed(incoming)
  const out = ['host', input.host]
  for (const name in incoming) {
    const value = incoming[name]
    if (value === undefined || !forwarded(name, listed)) continue
    if (typeof value === 'string') out.push(name, value)
    // Only `set-cookie` is an array in a request's parsed headers: one line per value, as undici sends an array.
    else for (const each of value) out.push(name, each)
  }
  out.push('x-forwarded-for', input.clientIp, 'x-request-id', input.requestId)
  if (input.credential !== undefined) out.push('authorization', input.credential)
  if (input.trace !== undefined) {
    out.push('traceparent', input.trace.traceparent)
    if (input.trace.tracestate !== undefined) out.push('tracestate', input.trace.tracestate)
  }
  return out
}
