import { GatewayError } from '../plugin/gateway-error.js'
import { tlsAlertOn } from './tls-alerts.js'

/**
 * Why an upstream gave no usable answer, in the `upstream_failure` field and the log (docs/errors.md). The status
 * is 502 for all of them: the caller learns the upstream is unusable, the operator learns why.
 * - `timeout`: no connection within `connect_ms`, or no response head within `response_ms`;
 * - `refused`: the connection was refused;
 * - `reset`: the connection broke before an answer (or before the first body byte was relayed);
 * - `dns`: the host name did not resolve;
 * - `tls`: the TLS handshake failed (certificate, protocol);
 * - `protocol`: the answer was not usable HTTP (invalid status, malformed head, body over the limit);
 * - `too_large`: the answer's body is larger than a route that reads it whole accepts (a body transform);
 * - `ejected`: every target is ejected by health checks: answered at once, nothing was sent;
 * - `circuit_open`: every target is out and at least one by its open circuit breaker: 503 with `Retry-After`,
 *   answered at once, nothing was sent (`circuitOpenError`);
 * - `unreachable`: any other network failure.
 */
export type UpstreamFailureKind = 'timeout' | 'refused' | 'reset' | 'dns' | 'tls' | 'protocol' | 'too_large' | 'ejected' | 'circuit_open' | 'unreachable'

const BY_CODE: Readonly<Record<string, UpstreamFailureKind>> = {
  UND_ERR_CONNECT_TIMEOUT: 'timeout',
  UND_ERR_HEADERS_TIMEOUT: 'timeout',
  UND_ERR_BODY_TIMEOUT: 'timeout',
  ETIMEDOUT: 'timeout',
  ECONNREFUSED: 'refused',
  ECONNRESET: 'reset',
  EPIPE: 'reset',
  UND_ERR_SOCKET: 'reset',
  UND_ERR_CLOSED: 'reset',
  ENOTFOUND: 'dns',
  EAI_AGAIN: 'dns',
  HPE_INVALID_STATUS: 'protocol',
  HPE_INVALID_CONSTANT: 'protocol',
  HPE_INVALID_HEADER_TOKEN: 'protocol',
  UND_ERR_RES_CONTENT_LENGTH_MISMATCH: 'protocol',
  UND_ERR_INFO: 'protocol',
  // Certificate checks whose code names no CERT, and TLS alerts node reports as EPROTO.
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'tls',
  HOSTNAME_MISMATCH: 'tls',
  EPROTO: 'tls',
  ERR_TLS_FILES: 'tls',
}

/** The kind of a network error undici reported (its code, or its cause's). */
export function failureKindOf (error: unknown): UpstreamFailureKind {
  const cause = (error as { cause?: unknown } | undefined)?.cause
  // undici's llhttp parser errors (invalid status line, header, Content-Length…) carry no code.
  if (nameOf(error) === 'HTTPParserError' || nameOf(cause) === 'HTTPParserError') return 'protocol'
  const code = codeOf(error) ?? codeOf(cause)
  if (code === undefined) return 'unreachable'
  // `other side closed` right after a TLS alert (a backend that wants a client certificate): tls-alerts.ts.
  if (code === 'UND_ERR_SOCKET' && tlsAlertOn((error as { socket?: { localPort?: unknown } }).socket?.localPort) !== undefined) return 'tls'
  const kind = BY_CODE[code]
  if (kind !== undefined) return kind
  if (code.startsWith('ERR_TLS') || code.startsWith('ERR_SSL') || code.includes('CERT')) return 'tls'
  if (code.startsWith('HPE_')) return 'protocol'
  return 'unreachable'
}

function nameOf (error: unknown): string | undefined {
  const name = (error as { name?: unknown } | null | undefined)?.name
  return typeof name === 'string' ? name : undefined
}

function codeOf (error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null | undefined)?.code
  return typeof code === 'string' ? code : undefined
}

const PHRASES: Readonly<Record<UpstreamFailureKind, string>> = {
  timeout: 'did not answer in time.',
  refused: 'could not be reached.',
  reset: 'closed the connection before answering.',
  dns: 'could not be reached.',
  tls: 'could not be reached.',
  protocol: 'answered with an invalid response.',
  too_large: 'answered with a body larger than this route accepts.',
  ejected: 'has no healthy target.',
  circuit_open: 'is failing: its circuit breaker is open.',
  unreachable: 'could not be reached.',
}

/**
 * The caller's answer when an upstream gave none: 502 `upstream_error`, `upstream_status: 0`, an empty
 * `upstream_body` and `upstream_failure`. `message` overrides the default wording; it never names the target.
 */
export function unreachableError (label: string, kind: UpstreamFailureKind, cause?: unknown, message?: string): GatewayError {
  return new GatewayError('upstream_error', {
    message: message ?? `${label} ${PHRASES[kind]}`,
    fields: { upstream_status: 0, upstream_failure: kind, upstream_body: '' },
    cause,
  })
}

/**
 * The caller's answer when circuit breakers keep every target out (and at least one is open): 503 `upstream_error`
 * with `upstream_failure: 'circuit_open'` and `Retry-After` (the seconds until the first breaker lets a trial
 * through). Nothing was sent to any target.
 */
export function circuitOpenError (label: string, retryAfterSeconds: number): GatewayError {
  return new GatewayError('upstream_error', {
    message: `${label} ${PHRASES.circuit_open}`,
    fields: { upstream_status: 0, upstream_failure: 'circuit_open', upstream_body: '' },
    headers: { 'retry-after': String(retryAfterSeconds) },
  }).withStatus(503)
}

/**
 * The caller's answer when `pick` found no target: `circuit_open` when a breaker keeps one out, else `ejected`.
 */
export function noTargetError (label: string, retryAfterSeconds: number): GatewayError {
  return retryAfterSeconds === 0 ? unreachableError(label, 'ejected') : circuitOpenError(label, retryAfterSeconds)
}

/** The caller's answer when an upstream answered 4xx/5xx: its status, mirrored, with a bounded body. */
export function mirroredError (label: string, status: number, body: string): GatewayError {
  return new GatewayError('upstream_error', {
    message: `${label} answered ${status}.`,
    fields: { upstream_status: status, upstream_body: body },
  }).withStatus(status)
}

/**
 * A failure that counts against a target's passive health and may be retried on another target: no usable answer
 * (timeout, refused, reset, dns, tls, protocol…). A status (any 4xx/5xx) does not count; neither do `ejected` and
 * `circuit_open` (nothing was sent).
 */
export function isTransportFailure (error: GatewayError): boolean {
  if (error.code !== 'upstream_error' || error.fields.upstream_status !== 0) return false
  const kind = error.fields.upstream_failure
  return kind !== 'ejected' && kind !== 'circuit_open'
}
