import t from 'tap'
import type { LoadResult } from '../../bench/load-job.js'
import type { ScenarioResult } from '../../bench/result-types.js'
import { checkTargets } from '../../bench/targets.js'

/** One measurement of `requests` requests that cost the server `cpuPerRequest` µs each. */
function measured (cpuPerRequest: number, requests = 1000): LoadResult {
  return {
    requests,
    durationSeconds: 1,
    rps: requests,
    statusCounts: { 200: requests },
    errors: 0,
    timeouts: 0,
    latencyMs: { p50: 1, p90: 1, p99: 1, p999: 1, max: 1, mean: 1 },
    serverCpuMicros: requests * cpuPerRequest,
    loadgenCpu: 0.5,
  }
}

function liveProxy (rounds: Array<Record<string, number>>): ScenarioResult {
  return {
    id: 'live-proxy',
    title: 'live-proxy',
    kind: 'throughput',
    baseline: 'lane-direct',
    connections: 50,
    variants: [],
    skipped: [],
    runs: rounds.flatMap((cpu, i) => Object.entries(cpu).map(([variant, us]) => ({ round: i + 1, variant, result: measured(us) }))),
  }
}

t.test('issue 24 relay goal: CPU per request against nginx, split at the Node floor, round by round', async (t) => {
  const scenario = liveProxy([
    { 'lane-direct': 10, 'lanegate-live': 45, nginx: 15, 'undici-floor': 36 },
    { 'lane-direct': 10, 'lanegate-live': 60, nginx: 15, 'undici-floor': 40 },
    { 'lane-direct': 10, 'lanegate-live': 42, nginx: 14, 'undici-floor': 35 },
  ])
  const relay = checkTargets([scenario]).filter((c) => c.what.includes('CPU per request'))
  t.same(relay, [
    { scenario: 'live-proxy', what: 'live relay\'s gateway CPU per request ÷ nginx\'s, same rounds', goal: '≤ 3×', measured: '3× (3–4)', met: true },
    { scenario: 'live-proxy', what: 'the Node floor (node:http + undici, nothing else) ÷ nginx, CPU per request', goal: '≤ 3× (reported)', measured: '2.5× (2.4–2.667)', met: true, reportOnly: true },
    { scenario: 'live-proxy', what: 'live relay (full chain) ÷ the Node floor, CPU per request', goal: 'reported', measured: '1.25× (1.2–1.5)', met: true, reportOnly: true },
  ])
})

t.test('the relay goal is not met above 3× nginx, and each line needs both of its variants in the rounds', async (t) => {
  const over = checkTargets([liveProxy([{ 'lanegate-live': 50, nginx: 15 }])]).filter((c) => c.what.includes('CPU per request'))
  t.same(over.map((c) => [c.measured, c.met]), [['3.333× (3.333–3.333)', false]])
  const noNginx = checkTargets([liveProxy([{ 'lanegate-live': 50, 'undici-floor': 40 }])]).filter((c) => c.what.includes('CPU per request'))
  t.same(noNginx.map((c) => c.what), ['live relay (full chain) ÷ the Node floor, CPU per request'])
})
