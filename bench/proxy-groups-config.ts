import type { Document } from 'yaml'

/**
 * The issue-41 variants of the demo's `pricing` proxy block: its one `upstream` turned into named target groups
 * (`upstreams`), each keeping every key the demo gives the upstream (balance, sockets, timeouts, retry, passive
 * health, strip_prefix, credential), so what differs from the plain block is only what is measured.
 */

/** The breaker each group of the breaker-split variant carries: all three rules, so each answer feeds both windows. */
export const BENCH_CIRCUIT_BREAKER = {
  consecutive_failures: 5,
  failure_rate: { percent: 50, window_seconds: 30, min_requests: 20 },
  slow: { ms: 1000, percent: 50, window_seconds: 30, min_requests: 20 },
  open_seconds: 30,
}

/** The mirror of the proxy-mirror scenario's mirrored route. */
export interface BenchMirror {
  /** The slow lane the copies go to (the group `shadow`). */
  url: string
  percent: number
  maxInFlight: number
}

/** The route the proxy-mirror scenario's mirrored GETs take: read_price's chain, plus the mirror. */
export const MIRRORED_ROUTE = 'read_price_mirrored'

/** `pricing.upstream` as a plain object, removed from the block. */
function takeUpstream (doc: Document): Record<string, unknown> {
  const node = doc.getIn(['services', 'pricing', 'upstream']) as { toJSON: () => Record<string, unknown> } | undefined
  if (node === undefined) throw new Error('gateway.yaml has no services.pricing.upstream')
  doc.deleteIn(['services', 'pricing', 'upstream'])
  return node.toJSON()
}

/**
 * Two groups `a` and `b`, each the block's upstream (the same targets) with a circuit breaker per target, and a
 * sticky split of 50/50 between them. Every request then pays for the split's choice and the breakers'
 * bookkeeping, and the targets still see half the requests each (the one bench client hashes to one group, whose
 * balancer alternates between them).
 */
export function withBreakerSplit (doc: Document): void {
  const group = { ...takeUpstream(doc), circuit_breaker: BENCH_CIRCUIT_BREAKER }
  doc.setIn(['services', 'pricing', 'upstreams'], doc.createNode({ a: group, b: group }))
  doc.setIn(['services', 'pricing', 'split'], doc.createNode({ weights: { a: 50, b: 50 }, sticky: 'client' }))
}

/**
 * Two groups, `primary` (the block's upstream; no split, so every request goes to it, the first group) and
 * `shadow` (the same keys, the slow lane its one target), and a route beside read_price (`/mirrored/:sku`, its
 * chain) whose own `mirror` copies `percent` % of its requests to `shadow`. read_price itself is not mirrored: both
 * routes run in the same process, in the same rounds.
 */
export function withMirrorRoute (doc: Document, mirror: BenchMirror): void {
  const upstream = takeUpstream(doc)
  doc.setIn(['services', 'pricing', 'upstreams'], doc.createNode({
    primary: upstream,
    shadow: { ...upstream, targets: [mirror.url] },
  }))
  const readPrice = doc.getIn(['services', 'pricing', 'routes', 'read_price']) as { toJSON: () => Record<string, unknown> } | undefined
  if (readPrice === undefined) throw new Error('gateway.yaml has no services.pricing.routes.read_price')
  doc.setIn(['services', 'pricing', 'routes', MIRRORED_ROUTE], doc.createNode({
    ...readPrice.toJSON(),
    path: '/mirrored/:sku',
    mirror: { upstream: 'shadow', percent: mirror.percent, max_in_flight: mirror.maxInFlight },
  }))
}
