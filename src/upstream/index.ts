/**
 * The gateway's one upstream engine: every HTTP request lanegate sends to another server goes through it (the
 * lane live relay, fan-out's lane calls, timeseries queries, and the `proxy` service).
 *
 * - `Upstream` (upstream.ts): weighted targets, each with its own undici pool; `round_robin` (smooth weighted) or
 *   `least_connections` balancing; passive and active health; `reconcile(settings)` for hot reload, `retire()` when its owner is removed.
 * - `relayUpstream` (relay.ts): streams a caller's request and the answer both ways with backpressure; retries
 *   idempotent body-less requests on another target before any byte reached the caller.
 * - `callUpstream` (call.ts): a request of the gateway's own with a bounded, buffered answer.
 * - `UpstreamRegistry` / `createSharedUpstreams` (registry.ts): upstreams by key, reconciled when a reload hands a
 *   new config object, or (`reconcile(wanted)`: the proxy blocks, and the lanes of `declaredLanes`) declared by each
 *   snapshot: built with it or at first use, retired when it drops them; a late request for a key it dropped gets a
 *   `SingleUseUpstream` (single-use.ts) that closes once the request is done; the shared set lives in
 *   `SharedResources.upstreams`.
 * - failure.ts: the one mapping of failures to `upstream_error` (mirrored 4xx/5xx; 502 with `upstream_failure`).
 * - headers.ts: hop-by-hop and credential hygiene both ways; the request's W3C trace context sent upstream.
 * - outcome.ts: each request counted once in `lanegate_upstream_*` by outcome (ok, http_4xx, http_5xx, timeout,
 *   unreachable), labelled with the upstream's registry key.
 */
export { Upstream, type UpstreamLogger } from './upstream.js'
export { Target } from './target.js'
export { relayUpstream, type RelayInput, type UpstreamHeaders } from './relay.js'
export { callUpstream, type CallAnswer, type CallInput } from './call.js'
export { UpstreamRegistry, createSharedUpstreams, laneUpstreamSettings, type DeclaredBuild, type SharedUpstreams } from './registry.js'
export { SingleUseUpstream } from './single-use.js'
export { declaredLanes } from './declared-lanes.js'
export {
  SINGLE_TARGET_DEFAULTS, singleTargetSettings, poolFingerprint,
  type BalanceStrategy, type UpstreamHealth, type UpstreamRetry, type UpstreamSettings, type UpstreamTarget, type UpstreamTimeouts,
} from './settings.js'
export { failureKindOf, isTransportFailure, mirroredError, unreachableError, type UpstreamFailureKind } from './failure.js'
export { relayedResponseHeaders, upstreamRequestHeaders, type UpstreamRequestHeaderInput, type UpstreamTrace } from './headers.js'
export { upstreamFailureOutcome } from './outcome.js'
export { readUpstreamBody, TRUNCATED_MARKER } from './error-body.js'
