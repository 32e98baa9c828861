import type { ReadinessReport } from '../observability/readiness.js'
import { mergeSamples, quantileMs, type Sample, type UpstreamSample } from './samples.js'
import { addSample, type RawClients, type RawConfig, type RawDispatches, type RawOverview, type RawUpstreams, type ViewName } from './process-views.js'

/** What the page needs besides the processes' answers. */
export interface ShapeContext {
  /** The request latency histogram's upper bounds, in seconds. */
  bounds: readonly number[]
  /** Overrides the processes' readiness (the primary's own /readyz verdict over its workers). */
  readiness?: ReadinessReport
  /** Serving workers (with `server.workers` > 1). */
  workers?: number
}

const STATE_RANK = { healthy: 0, probation: 1, ejected: 2 } as const

/**
 * The page's JSON for `view` from the raw answers of one process or of every worker: counters are summed (as
 * /metrics sums them), states combined (a target is as unhealthy as the worst worker sees it), quantiles worked
 * out after merging. Views that only read the config (routes, explain, config, dispatches from the shared
 * store) take the first answer.
 */
export function shapeView (view: ViewName, raws: readonly unknown[], context: ShapeContext): unknown {
  switch (view) {
    case 'overview': return shapeOverview(raws as RawOverview[], context)
    case 'upstreams': return shapeUpstreams(raws as RawUpstreams[], context)
    case 'clients': return shapeClients(raws as RawClients[])
    case 'config': return shapeConfig(raws as RawConfig[])
    case 'dispatches': return shapeDispatches(raws[0] as RawDispatches)
    default: return raws[0]
  }
}

function statusClasses (status: Sample['status']): Record<string, number> {
  return { '1xx': status[0], '2xx': status[1], '3xx': status[2], '4xx': status[3], '5xx': status[4] }
}

function sum (record: Record<string, number>): number {
  return Object.values(record).reduce((a, b) => a + b, 0)
}

function upstreamErrors (s: Sample): number {
  return Object.values(s.upstreams).reduce((a, u) => a + u.errors, 0)
}

function shapeOverview (raws: readonly RawOverview[], context: ShapeContext): unknown {
  const totals = raws.map((r) => r.totals).reduce(addSample)
  const series = mergeSamples(raws.map((r) => r.samples)).map((s) => ({
    t: s.t,
    rps: s.requests,
    p50_ms: quantileMs(s.latency, context.bounds, 0.5) ?? null,
    p99_ms: quantileMs(s.latency, context.bounds, 0.99) ?? null,
    status: statusClasses(s.status),
    limited: sum(s.limited),
    upstream_errors: upstreamErrors(s),
    tokens: s.tokens,
  }))
  const ready = context.readiness?.ready ?? raws.every((r) => r.ready)
  const failed = context.readiness?.failed ?? [...new Set(raws.flatMap((r) => r.failed))]
  return {
    config_version: Math.max(...raws.map((r) => r.version)),
    ready,
    failed,
    ...(context.workers === undefined ? {} : { workers: context.workers }),
    window_seconds: 900,
    totals: {
      requests: totals.requests,
      status: statusClasses(totals.status),
      p50_ms: quantileMs(totals.latency, context.bounds, 0.5) ?? null,
      p99_ms: quantileMs(totals.latency, context.bounds, 0.99) ?? null,
      limited: totals.limited,
      upstream_errors: upstreamErrors(totals),
      tokens: totals.tokens,
    },
    series,
  }
}

function shapeUpstreams (raws: readonly RawUpstreams[], context: ShapeContext): unknown {
  const minute: Record<string, UpstreamSample> = {}
  for (const raw of raws) {
    for (const [name, u] of Object.entries(raw.lastMinute)) {
      const known = minute[name]
      minute[name] = known === undefined ? u : { calls: known.calls + u.calls, errors: known.errors + u.errors, latency: known.latency.map((n, i) => n + (u.latency[i] ?? 0)) }
    }
  }
  type Target = RawUpstreams['upstreams'][number]['targets'][number]
  const byName = new Map<string, { kind: string, used: boolean, targets: Map<string, Target> }>()
  for (const raw of raws) {
    for (const u of raw.upstreams) {
      let known = byName.get(u.upstream)
      if (known === undefined) {
        known = { kind: u.kind, used: false, targets: new Map() }
        byName.set(u.upstream, known)
      }
      known.used ||= u.used
      for (const t of u.targets) {
        const seen = known.targets.get(t.url)
        known.targets.set(t.url, seen === undefined
          ? t
          : {
              url: t.url,
              weight: t.weight,
              state: STATE_RANK[t.state] > STATE_RANK[seen.state] ? t.state : seen.state,
              inFlight: seen.inFlight + t.inFlight,
              lastProbe: (t.lastProbe?.at ?? 0) > (seen.lastProbe?.at ?? 0) ? t.lastProbe : seen.lastProbe,
              // The most open breaker a worker reports (workers share openings, half-open is each one's own).
              ...(t.circuit === undefined && seen.circuit === undefined ? {} : { circuit: moreOpen(t.circuit, seen.circuit) }),
            })
      }
    }
  }
  const order = { proxy: 0, lane: 1, service: 2 } as Record<string, number>
  return {
    upstreams: [...byName].sort((a, b) => (order[a[1].kind] ?? 3) - (order[b[1].kind] ?? 3) || a[0].localeCompare(b[0])).map(([name, u]) => {
      const m = minute[name]
      return {
        name,
        kind: u.kind,
        used: u.used,
        calls_per_min: m?.calls ?? 0,
        errors_per_min: m?.errors ?? 0,
        p99_ms: m === undefined ? null : quantileMs(m.latency, context.bounds, 0.99) ?? null,
        targets: [...u.targets.values()].map((t) => ({
          url: t.url,
          weight: t.weight,
          // Lanes have no health checks (their errors show in the counts): "healthy" would claim what nothing checked.
          state: !u.used ? 'unused' : u.kind === 'lane' && t.state === 'healthy' ? 'unchecked' : t.state,
          in_flight: t.inFlight,
          last_probe: t.lastProbe === undefined ? null : { at: new Date(t.lastProbe.at).toISOString(), ok: t.lastProbe.ok, detail: t.lastProbe.detail },
          // Only for targets with a circuit breaker: `closed`, `half_open` or `open`.
          ...(t.circuit === undefined ? {} : { circuit: t.circuit }),
        })),
      }
    }),
    splits: raws[0]?.splits ?? [],
  }
}

function shapeClients (raws: readonly RawClients[]): unknown {
  const first = raws[0] as RawClients
  const tokens: Record<string, number> = {}
  const refusals: Record<string, Record<string, number>> = {}
  for (const raw of raws) {
    for (const [c, n] of Object.entries(raw.tokens)) tokens[c] = (tokens[c] ?? 0) + n
    for (const [c, byStatus] of Object.entries(raw.refusals)) {
      const into = refusals[c] ??= {}
      for (const [status, n] of Object.entries(byStatus)) into[status] = (into[status] ?? 0) + n
    }
  }
  const known = new Set(first.accounts.map((a) => a.client_id))
  return {
    clients: first.accounts.map((a) => ({
      client_id: a.client_id,
      organization: a.organization,
      status: a.status,
      tokens_issued: tokens[a.client_id] ?? 0,
      refusals: refusals[a.client_id] ?? {},
    })).concat(Object.keys(tokens).filter((c) => !known.has(c)).map((c) => ({ client_id: c, organization: '', status: 'removed', tokens_issued: tokens[c] ?? 0, refusals: refusals[c] ?? {} }))),
    limits: first.limits.map((limit, i) => {
      const lists = raws.map((r) => r.limits[i]?.keys)
      const known = lists.filter((k): k is NonNullable<typeof k> => k !== null && k !== undefined)
      const keys = known.length === 0 ? null : known.flat().sort((a, b) => a.remaining - b.remaining || a.ms_before_reset - b.ms_before_reset).slice(0, 10)
      return {
        limit: limit.limit,
        key: limit.key,
        points: limit.points,
        window_seconds: limit.window_seconds,
        keys: keys?.map((k) => ({ key: k.key, used: k.used, remaining: k.remaining, reset_seconds: Math.ceil(k.ms_before_reset / 1000) })) ?? null,
      }
    }),
  }
}

function shapeConfig (raws: readonly RawConfig[]): unknown {
  // The worker serving the newest version has the fullest story (a restarted worker's starts at its own start).
  const newest = [...raws].sort((a, b) => b.version - a.version)[0] as RawConfig
  const reloads = newest.reloads
  return {
    version: newest.version,
    file: newest.file,
    // When the version served now was loaded (a reload that applied it, or the start): not the process start.
    loaded_at: (reloads.find((r) => (r.outcome === 'applied' || r.outcome === 'loaded') && r.version === newest.version) ?? reloads[reloads.length - 1])?.at ?? null,
    last_reload: reloads.find((r) => r.outcome !== 'loaded') ?? null,
    reloads,
  }
}

function shapeDispatches (raw: RawDispatches): unknown {
  return {
    enabled: raw.enabled,
    by_status: raw.byStatus,
    latest: raw.latest.map((d) => ({
      dispatch_id: d.dispatchId,
      operation_type: d.operationType,
      client_id: d.clientId,
      organization: d.ownerOrgId,
      status: d.status,
      created_at: d.createdAt,
      committed_at: d.committedAt,
      completed_at: d.completedAt,
      stores: d.stores.map((s) => ({
        store: s.storeOrgId,
        preview: s.preview.status,
        delivery: s.delivery?.status ?? null,
        attempts: s.delivery?.attempts ?? 0,
        error: describeError(s.delivery?.error ?? s.preview.error),
      })),
    })),
  }
}

/** A stored upstream-error description in a few words (its code and status), never its whole body. */
function describeError (error: Record<string, unknown> | undefined): string | null {
  if (error === undefined) return null
  const parts = ['error', 'upstream_failure', 'upstream_status', 'code'].map((k) => error[k]).filter((v) => (typeof v === 'string' && v !== '') || (typeof v === 'number' && v !== 0))
  return parts.length === 0 ? 'failed' : parts.join(' ')
}

const CIRCUIT_RANK: Readonly<Record<string, number>> = { closed: 0, half_open: 1, open: 2 }

/** Of two workers' views of one target's breaker, the more open one. */
function moreOpen<T extends string> (a: T | undefined, b: T | undefined): T | undefined {
  if (a === undefined) return b
  if (b === undefined) return a
  return (CIRCUIT_RANK[a] ?? 0) >= (CIRCUIT_RANK[b] ?? 0) ? a : b
}
