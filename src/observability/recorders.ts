import type { GatewayMetrics, UpstreamOutcome } from './metrics.js'

/**
 * The process's metrics, for code that records outside a request's hooks (the live relay, the token handler,
 * fan-out deliveries) and would otherwise need the metrics object passed through every layer. `lanegate start`
 * runs one gateway per process; when a test process boots several gateways in-process, the last one booted with
 * metrics on receives these counts (request series are per gateway: they are recorded by the app's own hooks).
 */
let active: GatewayMetrics | undefined

/** Makes `metrics` the process's recorder target (`undefined`: metrics off, the recorders do nothing). */
export function useMetrics (metrics: GatewayMetrics | undefined): void {
  active = metrics
}

/** One upstream call: `upstream` is the lane's store id or the proxied service's target name. */
export function recordUpstream (upstream: string, outcome: UpstreamOutcome, seconds: number): void {
  active?.upstream(upstream, outcome, seconds)
}

/** The outcome label of an upstream answer's HTTP status. */
export function outcomeOfStatus (status: number): UpstreamOutcome {
  if (status >= 500) return 'http_5xx'
  if (status >= 400) return 'http_4xx'
  return 'ok'
}

/** A token was issued to `clientId` (a configured account: the label set is bounded by gateway.yaml). */
export function recordTokenIssued (clientId: string): void {
  active?.tokensIssued.inc(clientId)
}

/** A fan-out dispatch reached `status` (committed, or a final status). */
export function recordFanoutDispatch (status: string): void {
  active?.fanoutDispatches.inc(status)
}

/** A target's circuit breaker changed state (`to`: closed, half_open, open); `upstream` is the registry key. */
export function recordCircuitTransition (upstream: string, target: string, to: string): void {
  active?.circuitTransitions.inc(upstream, target, to)
}

/** A retry of a request to `upstream`: `sent`, or `over_budget` (not sent: its `retry.budget` was spent). */
export function recordRetry (upstream: string, result: 'sent' | 'over_budget'): void {
  active?.upstreamRetries.inc(upstream, result)
}

/** A target ejected (`reason`: `outlier`) of `upstream` (the registry key). */
export function recordEjection (upstream: string, target: string, reason: string): void {
  active?.ejections.inc(upstream, target, reason)
}

/** A request of proxy block `service` sent to its target group `group` (blocks with `upstreams:`). */
export function recordGroupRequest (service: string, group: string): void {
  active?.upstreamGroupRequests.inc(service, group)
}

/** A request copy of proxy block `service` to its mirror group: `sent`, or dropped (`dropped_body_too_large`, `dropped_in_flight`). */
export function recordMirror (service: string, result: 'sent' | 'dropped_body_too_large' | 'dropped_in_flight'): void {
  active?.upstreamMirrors.inc(service, result)
}
