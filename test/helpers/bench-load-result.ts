import type { LoadResult } from '../../bench/load-job.js'

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
