import t from 'tap'
import { consolePairs, gatewayTreeWithout } from '../../bench/console-cost.js'
import type { LoadResult } from '../../bench/load-job.js'

function run (requests: number, serverCpuMicros: number): LoadResult {
  return {
    requests, durationSeconds: 1, rps: requests, statusCounts: { 200: requests }, errors: 0, timeouts: 0,
    latencyMs: { p50: 1, p90: 1, p99: 1, p999: 1, max: 1, mean: 1 }, serverCpuMicros, loadgenCpu: 0.5,
  }
}

t.test('console open and closed are paired by name and compared within each round, not across them', async (t) => {
  // Round 1 is a slow machine for both (40 vs 42 µs), round 2 a fast one (20 vs 20.2): per round 1.05× and 1.01×.
  const rounds: Array<Record<string, LoadResult>> = [
    { 'fastify-hello': run(1000, 10_000), 'lanegate-auth-get': run(1000, 40_000), 'lanegate-auth-get+console': run(1000, 42_000) },
    { 'fastify-hello': run(1000, 10_000), 'lanegate-auth-get': run(1000, 20_000), 'lanegate-auth-get+console': run(1000, 20_200) },
    // A round where the open variant did not run (stopped early) does not enter the pair.
    { 'lanegate-auth-get': run(1000, 90_000) },
  ]
  t.same(consolePairs(['fastify-hello', 'lanegate-auth-get', 'lanegate-auth-get+console', 'lanegate-live+console'], rounds), [{
    open: 'lanegate-auth-get+console',
    closed: 'lanegate-auth-get',
    rounds: 2,
    openCpuUsPerRequest: { median: 31.1, min: 20.2, max: 42 },
    closedCpuUsPerRequest: { median: 30, min: 20, max: 40 },
    cpuRatio: { median: 1.03, min: 1.01, max: 1.05 },
  }])
})

t.test('the closed twin (the control) is paired with the closed gateway like the open one', async (t) => {
  const rounds: Array<Record<string, LoadResult>> = [
    { 'lanegate-auth-get': run(1000, 30_000), 'lanegate-auth-get+console': run(1000, 31_500), 'lanegate-auth-get+closed-twin': run(1000, 30_900) },
  ]
  t.same(consolePairs(['lanegate-auth-get', 'lanegate-auth-get+console', 'lanegate-auth-get+closed-twin'], rounds).map((p) => [p.open, p.closed, p.cpuRatio.median]), [
    ['lanegate-auth-get+console', 'lanegate-auth-get', 1.05],
    ['lanegate-auth-get+closed-twin', 'lanegate-auth-get', 1.03],
  ])
})

t.test('a poller inside the gateway\'s process tree is refused: its CPU would be billed to the gateway', { skip: process.platform !== 'linux' && 'needs /proc' }, async (t) => {
  const { spawn } = await import('node:child_process')
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 5000)'], { stdio: 'ignore' })
  t.teardown(() => { child.kill() })
  await new Promise((resolve) => child.once('spawn', resolve))
  t.throws(() => gatewayTreeWithout(process.pid, child.pid as number), /is in the gateway's process tree/)
  t.same(gatewayTreeWithout(child.pid as number, process.pid), [child.pid])
})
