import type { LoadResult } from './load-job.js'
import type { VariantRole, VariantSummary } from './result-types.js'
import { round, spread, type Spread } from './stats.js'

/** At or above this share of its core, the load generator (not the server) may be what limits the rate. */
export const LOADGEN_SATURATION = 0.9

/** What went wrong in one run given the statuses it may answer; empty when nothing did. */
export function runProblems (result: LoadResult, allowed: readonly number[]): string[] {
  const problems: string[] = []
  if (result.requests === 0) problems.push('no response at all')
  const unexpected = Object.entries(result.statusCounts).filter(([status]) => !allowed.includes(Number(status)))
  if (unexpected.length > 0) problems.push(`unexpected statuses ${unexpected.map(([s, n]) => `${s}×${n}`).join(', ')} (expected only ${allowed.join('/')})`)
  if (result.errors > 0) problems.push(`${result.errors} request error${result.errors === 1 ? '' : 's'} (${result.timeouts} timeout${result.timeouts === 1 ? '' : 's'})${result.firstError === undefined ? '' : `, first: ${result.firstError}`}`)
  return problems
}

function rounded (s: Spread, digits = 3): Spread {
  return { median: round(s.median, digits), min: round(s.min, digits), max: round(s.max, digits) }
}

/**
 * Summarizes the measured rounds of one scenario. `rounds[r]` maps each variant name to its result in round r;
 * ratios and added latencies are taken within a round (against the baseline measured in that same round), then
 * spread over rounds, so slow drift of the machine does not bias one variant.
 */
export function summarizeVariants (
  variants: ReadonlyArray<{ name: string, role: VariantRole }>,
  rounds: ReadonlyArray<Readonly<Record<string, LoadResult>>>,
  options: { latency: boolean },
): VariantSummary[] {
  const baseline = variants.find((v) => v.role === 'baseline')
  return variants.map((variant) => {
    const mine = rounds.map((r) => r[variant.name]).filter((r): r is LoadResult => r !== undefined)
    const paired = baseline === undefined
      ? []
      : rounds.filter((r) => r[variant.name] !== undefined && r[baseline.name] !== undefined).map((r) => [r[variant.name], r[baseline.name]] as const)
    const statusCounts: Record<string, number> = {}
    for (const r of mine) for (const [s, n] of Object.entries(r.statusCounts)) statusCounts[s] = (statusCounts[s] ?? 0) + n
    const loadgenCpuMax = Math.max(0, ...mine.map((r) => r.loadgenCpu))
    const perRequest = (micros: number, r: LoadResult): number => r.requests === 0 ? Number.NaN : micros / r.requests
    const summary: VariantSummary = {
      name: variant.name,
      role: variant.role,
      rps: rounded(spread(mine.map((r) => r.rps)), 0),
      ratio: rounded(spread(paired.map(([v, b]) => v.rps / b.rps))),
      p50Ms: rounded(spread(mine.map((r) => r.latencyMs.p50))),
      p99Ms: rounded(spread(mine.map((r) => r.latencyMs.p99))),
      serverCpuUsPerRequest: rounded(spread(mine.map((r) => perRequest(r.serverCpuMicros, r))), 1),
      loadgenCpuMax: round(loadgenCpuMax, 2),
      loadgenSaturated: loadgenCpuMax >= LOADGEN_SATURATION,
      statusCounts,
      requests: mine.reduce((n, r) => n + r.requests, 0),
    }
    if (variant.name.startsWith('lanegate-workers-') && mine.some((r) => r.serverRootCpuMicros !== undefined)) {
      summary.primaryCpuUsPerRequest = rounded(spread(mine.map((r) => perRequest(r.serverRootCpuMicros ?? Number.NaN, r))), 1)
    }
    if (mine.some((r) => r.serverHeapBytes !== undefined)) {
      summary.heapBytesPerRequest = rounded(spread(mine.map((r) => perRequest(r.serverHeapBytes ?? Number.NaN, r))), 0)
    }
    if (mine.some((r) => r.upstreamCpuMicros !== undefined)) {
      summary.upstreamCpuUsPerRequest = rounded(spread(mine.map((r) => perRequest(r.upstreamCpuMicros ?? Number.NaN, r))), 1)
    }
    if (options.latency) {
      summary.p90Ms = rounded(spread(mine.map((r) => r.latencyMs.p90)))
      summary.p999Ms = rounded(spread(mine.map((r) => r.latencyMs.p999)))
      summary.maxMs = rounded(spread(mine.map((r) => r.latencyMs.max)))
      summary.addedP50Ms = rounded(spread(paired.map(([v, b]) => v.latencyMs.p50 - b.latencyMs.p50)))
      summary.addedP99Ms = rounded(spread(paired.map(([v, b]) => v.latencyMs.p99 - b.latencyMs.p99)))
      summary.addedP999Ms = rounded(spread(paired.map(([v, b]) => v.latencyMs.p999 - b.latencyMs.p999)))
    }
    return summary
  })
}
