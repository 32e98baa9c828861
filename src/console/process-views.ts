import type { ConsoleSources } from './console-sources.js'
import { explainRequest, UnknownClientError, type ExplainCaller } from '../describe/explain.js'
import { routesJson, servedRoutes } from '../describe/route-table.js'
import type { Dispatch } from '../store/dispatch-store.js'
import { declaredLanes } from '../upstream/declared-lanes.js'
import type { UpstreamState } from '../upstream/registry.js'
import { mergeSamples, type Sample, type UpstreamSample } from './samples.js'
import type { ConsoleState } from './console-state.js'
import type { ReloadRecord } from './reload-history.js'
import { splitsOf, type SplitView } from './upstream-splits.js'

/** The views the console serves, each a JSON endpoint `/api/console/<view>`. */
export const VIEWS = ['overview', 'routes', 'explain', 'upstreams', 'clients', 'config', 'dispatches'] as const
export type ViewName = typeof VIEWS[number]

/**
 * What one process answers for a view, before the answers of several processes are merged (`server.workers` > 1)
 * and shaped for the page (shape-views.ts). Counters are sums; states are lists to be combined.
 */
export interface RawOverview {
  totals: Sample
  samples: Sample[]
  version: number
  ready: boolean
  failed: string[]
}

export interface RawUpstreams {
  upstreams: Array<UpstreamState & { kind: 'proxy' | 'lane' | 'service', used: boolean }>
  /** Calls, errors and latency per upstream over the last minute. */
  lastMinute: Record<string, UpstreamSample>
  /** The config's traffic splits: groups, weights and rules (the same in every worker). */
  splits: readonly SplitView[]
}

export interface RawClients {
  accounts: Array<{ client_id: string, organization: string, status: string }>
  tokens: Record<string, number>
  refusals: Record<string, Record<string, number>>
  limits: Array<{ limit: string, key: string, points: number, window_seconds: number, keys: Array<{ key: string, used: number, remaining: number, ms_before_reset: number }> | null }>
}

export interface RawConfig {
  version: number
  file: string | null
  reloads: ReloadRecord[]
}

export interface RawDispatches {
  enabled: boolean
  byStatus: Record<string, number>
  latest: Dispatch[]
}

/** Query parameters a view reads (`since` for the overview; `client`, `method`, `path` for explain). */
export type ViewQuery = Readonly<Record<string, string | undefined>>

/** Thrown for a query the view cannot answer (answered 400 with the message). */
export class ViewQueryError extends Error {}

/** How many of the latest dispatches the console lists. */
const LATEST_DISPATCHES = 10
/** How many keys per limit. */
const CLOSEST_KEYS = 10

/** One process's raw answer for `view`. */
export async function processView (booted: ConsoleSources, state: ConsoleState, view: ViewName, query: ViewQuery): Promise<unknown> {
  const snapshot = booted.gateway.current()
  const { config } = snapshot
  switch (view) {
    case 'overview': return overviewView(booted, state, query)
    case 'routes': return routesJson(servedRoutes(config, booted.gateway.catalog))
    case 'explain': return explainView(booted, query)
    case 'upstreams': return upstreamsView(booted, state)
    case 'clients': return clientsView(booted, state)
    case 'config': {
      const raw: RawConfig = { version: snapshot.version, file: booted.reloads.file ?? null, reloads: booted.reloads.list() }
      return raw
    }
    case 'dispatches': {
      const enabled = config.services.fanout !== undefined
      const summary = await booted.gateway.shared.store.dispatches.summary(LATEST_DISPATCHES)
      const raw: RawDispatches = { enabled, byStatus: summary.byStatus as Record<string, number>, latest: summary.latest }
      return raw
    }
  }
}

/** Totals since the ring began, the samples after `since`, and readiness. */
async function overviewView (booted: ConsoleSources, state: ConsoleState, query: ViewQuery): Promise<RawOverview> {
  const all = state.ring.since(0)
  const since = Number(query.since ?? 0)
  const report = await booted.readiness.report()
  return {
    totals: mergeSamples([all]).reduce(addSample, emptyLike(all[0], state)),
    samples: Number.isFinite(since) && since > 0 ? all.filter((s) => s.t > since) : all,
    version: booted.gateway.current().version,
    ready: report.ready,
    failed: report.failed,
  }
}

/** What a route's chain would do for a client (`explain`, as the CLI says it). */
function explainView (booted: ConsoleSources, query: ViewQuery): unknown {
  const method = (query.method ?? '').toUpperCase()
  const path = query.path ?? ''
  if (!/^[A-Z]{3,7}$/.test(method) || !path.startsWith('/')) throw new ViewQueryError('explain needs method (GET, POST, …) and a path starting with /')
  const caller: ExplainCaller = query.client === undefined || query.client === '' ? { kind: 'none' } : { kind: 'client', clientId: query.client }
  try {
    return explainRequest(booted.gateway.current().config, booted.gateway.catalog, method, path, caller)
  } catch (error) {
    if (error instanceof UnknownClientError) throw new ViewQueryError(error.message)
    throw error
  }
}

/** Every upstream (proxy blocks, lanes, in-process services) with its targets, and the last minute's calls. */
function upstreamsView (booted: ConsoleSources, state: ConsoleState): RawUpstreams {
  const { upstreams } = booted.gateway.shared
  const lanes = declaredLanes(booted.gateway.current().config)
  const built = upstreams.lanes.states()
  const unused = [...lanes].filter(([id]) => !built.some((b) => b.upstream === id)).map(([id, lane]) => ({
    upstream: id, kind: 'lane' as const, used: false,
    targets: [{ url: lane.base_url, weight: 1, state: 'healthy' as const, inFlight: 0, lastProbe: undefined }],
  }))
  return {
    upstreams: [
      ...upstreams.proxies.states().map((u) => ({ ...u, kind: 'proxy' as const, used: true })),
      ...built.filter((u) => lanes.has(u.upstream)).map((u) => ({ ...u, kind: 'lane' as const, used: true })),
      ...unused,
      ...upstreams.services.states().map((u) => ({ ...u, kind: 'service' as const, used: true })),
    ],
    lastMinute: lastMinute(state.ring.since(Math.floor(Date.now() / 1000) - 60)),
    splits: splitsOf(booted.gateway.current().config),
  }
}

/** The accounts, their tokens and refusals, and each limit with the keys closest to it. */
function clientsView (booted: ConsoleSources, state: ConsoleState): RawClients {
  const { config } = booted.gateway.current()
  const metrics = state.metrics
  const tokens: Record<string, number> = {}
  metrics.tokensIssued.each((labels, cell) => { tokens[labels.client_id ?? ''] = cell.value })
  const refusals: Record<string, Record<string, number>> = {}
  metrics.clientRefusals.each((labels, cell) => {
    const byStatus = refusals[labels.client_id ?? ''] ??= {}
    byStatus[labels.status ?? ''] = cell.value
  })
  const closest = new Map((booted.gateway.shared.limiters.closest?.(CLOSEST_KEYS) ?? []).map((c) => [c.limit, c.keys]))
  return {
    accounts: config.service_accounts.map((a) => ({ client_id: a.client_id, organization: a.organization, status: a.status })),
    tokens,
    refusals,
    limits: Object.entries(config.rate_limits).map(([limit, settings]) => ({
      limit,
      key: settings.key,
      points: settings.points,
      window_seconds: settings.window_seconds,
      keys: closest.has(limit)
        ? (closest.get(limit) ?? []).map((k) => ({ key: k.key, used: k.used, remaining: k.remaining, ms_before_reset: k.msBeforeReset }))
        : config.rate_limit_store.driver === 'memory' && !state.inWorker ? [] : null,
    })),
  }
}

function emptyLike (first: Sample | undefined, state: ConsoleState): Sample {
  return { t: first?.t ?? 0, requests: 0, status: [0, 0, 0, 0, 0], latency: new Array<number>(state.metrics.durations.upperBounds.length + 1).fill(0), limited: {}, upstreams: {}, tokens: 0 }
}

/** Adds `b` into the running total `a` (keeps `a.t`). */
export function addSample (a: Sample, b: Sample): Sample {
  const merged = mergeSamples([[{ ...a, t: 0 }], [{ ...b, t: 0 }]])[0] as Sample
  return { ...merged, t: a.t }
}

function lastMinute (samples: readonly Sample[]): Record<string, UpstreamSample> {
  const out: Record<string, UpstreamSample> = {}
  for (const s of samples) {
    for (const [name, u] of Object.entries(s.upstreams)) {
      const known = out[name]
      out[name] = known === undefined ? { ...u, latency: [...u.latency] } : { calls: known.calls + u.calls, errors: known.errors + u.errors, latency: known.latency.map((n, i) => n + (u.latency[i] ?? 0)) }
    }
  }
  return out
}

