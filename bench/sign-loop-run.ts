import { performance } from 'node:perf_hooks'
import type { LoadResult } from './load-job.js'
import { treeCpuMicros } from './proc-stat.js'
import type { RunningServer } from './servers.js'

/**
 * One run of the sign-loop variant (bench/servers/sign-loop.ts) for `seconds`: its signatures stand for the
 * requests of a LoadResult, its process tree's CPU read around the run as the load generator reads a server's, so
 * CPU per signature sits in the same tables, ratios and rounds as the token endpoint's CPU per request.
 */
export async function runSignLoop (server: RunningServer, seconds: number): Promise<LoadResult> {
  const cpuBefore = treeCpuMicros(server.pid)
  const started = performance.now()
  const response = await fetch(`${server.url}/loop?seconds=${seconds}`)
  const { signatures } = await response.json() as { signatures: number }
  const wall = (performance.now() - started) / 1000
  const serverCpuMicros = treeCpuMicros(server.pid) - cpuBefore
  const eachMs = signatures === 0 ? Number.NaN : wall * 1000 / signatures
  return {
    requests: signatures,
    durationSeconds: wall,
    rps: signatures / wall,
    statusCounts: { [String(response.status)]: signatures },
    errors: 0,
    timeouts: 0,
    latencyMs: { p50: eachMs, p90: eachMs, p99: eachMs, p999: eachMs, max: eachMs, mean: eachMs },
    serverCpuMicros,
    loadgenCpu: 0,
  }
}
