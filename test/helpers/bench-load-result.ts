import type { LoadResult } from '../../bench/load-job.js'
import type { ScenarioResult } from '../../bench/result-types.js'

/**
 * One made-up bench measurement, for tests of the harness's target checks: `requests` 200s that cost the server
 * `cpuPerRequest` µs each (and `heapPerRequest` bytes each, when given), with the given p99 and p99.9 (ms).
 */
export function measuredLoad (cpuPerRequest: number, options: { requests?: number, p99?: number, p999?: number, heapPerRequest?: number } = {}): LoadResult {
  const { requests = 1000, p99 = 1, p999 = 1, heapPerRequest } = options
  return {
    requests,
    durationSeconds: 1,
    rps: requests,
    statusCounts: { 200: requests },
    errors: 0,
    timeouts: 0,
    latencyMs: { p50: 0.3, p90: 0.5, p99, p999, max: p999, mean: 0.4 },
    serverCpuMicros: requests * cpuPerRequest,
    loadgenCpu: 0.5,
    ...(heapPerRequest === undefined ? {} : { serverHeapBytes: requests * heapPerRequest }),
  }
}

/** A made-up throughput scenario `id` whose rounds measured each variant as given (in round order). */
export function madeUpScenario (id: string, rounds: Array<Record<string, LoadResult>>, extra: Partial<ScenarioResult> = {}): ScenarioResult {
  return {
    id,
    title: id,
    kind: 'throughput',
    connections: 50,
    variants: [],
    skipped: [],
    runs: rounds.flatMap((byVariant, i) => Object.entries(byVariant).map(([variant, result]) => ({ round: i + 1, variant, result }))),
    ...extra,
  }
}
