import { GatewayError } from '../plugin/gateway-error.js'
import type { UpstreamOutcome } from '../observability/metrics.js'
import { outcomeOfStatus, recordUpstream } from '../observability/recorders.js'
import type { UpstreamTrace } from './headers.js'
import type { Upstream } from './upstream.js'

/**
 * The `lanegate_upstream_requests_total` outcome of a call that failed, or undefined when the failure was not the
 * upstream's (the caller went away, its body was too large): a mirrored 4xx/5xx by its status; no answer
 * (`upstream_status: 0`) is `timeout` for the `timeout` kind, `tls` for the `tls` kind (a failed handshake or
 * certificate check), `circuit_open` when circuit breakers kept every target out (nothing was sent) and `unreachable` for every other kind (refused, reset, dns, protocol, ejected, unreachable:
 * docs/errors.md).
 */
export function upstreamFailureOutcome (error: unknown): UpstreamOutcome | undefined {
  if (!(error instanceof GatewayError) || error.code !== 'upstream_error') return undefined
  const status = error.fields.upstream_status
  if (typeof status !== 'number') return undefined
  if (status !== 0) return outcomeOfStatus(status)
  const kind = error.fields.upstream_failure
  return kind === 'timeout' || kind === 'tls' || kind === 'circuit_open' ? kind : 'unreachable'
}

/**
 * Records one request to `upstream` in the metrics, once whatever the retries: `started` is `performance.now()`
 * at its first attempt; the duration runs until the answer's head (or the failure), not a streamed body's end.
 * `trace` (the request's, when the call is made for one) is told too, for the request's access line.
 */
export function recordOutcome (upstream: Upstream, outcome: UpstreamOutcome | undefined, started: number, trace?: UpstreamTrace): void {
  if (outcome === undefined) return
  const seconds = (performance.now() - started) / 1000
  recordUpstream(upstream.name, outcome, seconds)
  trace?.upstreamSettled?.(upstream.name, seconds)
}
