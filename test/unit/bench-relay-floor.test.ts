import t from 'tap'
import { measuredLoad } from '../helpers/bench-load-result.js'
import type { ScenarioResult } from '../../bench/result-types.js'
import { checkTargets } from '../../bench/targets.js'

function liveProxy (rounds: Array<Record<string, number>>, heap: Array<Record<string, number>> = []): ScenarioResult {
  return {
    id: 'live-proxy',
    title: 'live-proxy',
    kind: 'throughput',
    baseline: 'lane-direct',
    connections: 50,
    variants: [],
    skipped: [],
    runs: rounds.flatMap((cpu, i) => Object.entries(cpu).map(([variant, us]) => ({ round: i + 1, variant, result: measuredLoad(us, { heapPerRequest: heap[i]?.[variant] }) }))),
  }
}

t.test('the relay goals: CPU per request against nginx and against the Node floor, round by round', async (t) => {
  const scenario = liveProxy([
    { 'lane-direct': 10, 'lanegate-live': 45, nginx: 15, 'undici-floor': 36 },
    { 'lane-direct': 10, 'lanegate-live': 60, nginx: 15, 'undici-floor': 40 },
    { 'lane-direct': 10, 'lanegate-live': 42, nginx: 14, 'undici-floor': 35 },
  ])
  const relay = checkTargets([scenario]).filter((c) => c.what.includes('CPU per request'))
  t.same(relay, [
    { scenario: 'live-proxy', what: 'live relay\'s gateway CPU per request ÷ nginx\'s, same rounds', goal: '≤ 3.5×', measured: '3× (3–4)', met: true },
    { scenario: 'live-proxy', what: 'the Node floor (node:http + undici, nothing else) ÷ nginx, CPU per request', goal: '≤ 3.5× (reported)', measured: '2.5× (2.4–2.667)', met: true, reportOnly: true },
    { scenario: 'live-proxy', what: 'live relay (full chain) ÷ the Node floor, CPU per request', goal: '≤ 1.25×', measured: '1.25× (1.2–1.5)', met: true },
  ])
})

t.test('heap bytes per request against the Node floor, and the raw-net floor reported, round by round', async (t) => {
  const scenario = liveProxy([
    { 'lanegate-live': 45, 'undici-floor': 36, 'net-floor': 20, nginx: 15 },
    { 'lanegate-live': 60, 'undici-floor': 40, 'net-floor': 25, nginx: 15 },
  ], [
    { 'lanegate-live': 2800, 'undici-floor': 2000, 'net-floor': 400 },
    { 'lanegate-live': 2400, 'undici-floor': 2000, 'net-floor': 500 },
  ])
  const lines = checkTargets([scenario]).filter((c) => c.what.includes('Node floor') || c.what.includes('raw-net'))
  t.same(lines, [
    { scenario: 'live-proxy', what: 'the Node floor (node:http + undici, nothing else) ÷ nginx, CPU per request', goal: '≤ 3.5× (reported)', measured: '2.533× (2.4–2.667)', met: true, reportOnly: true },
    { scenario: 'live-proxy', what: 'live relay (full chain) ÷ the Node floor, CPU per request', goal: '≤ 1.25×', measured: '1.375× (1.25–1.5)', met: false },
    { scenario: 'live-proxy', what: 'live relay (full chain) ÷ the Node floor, heap bytes allocated per request', goal: '≤ 1.3×', measured: '1.3× (1.2–1.4)', met: true },
    { scenario: 'live-proxy', what: 'live relay (full chain) ÷ the raw-net floor (no HTTP library), CPU per request', goal: 'reported', measured: '2.325× (2.25–2.4)', met: true, reportOnly: true },
    { scenario: 'live-proxy', what: 'the Node floor ÷ the raw-net floor (what node:http and undici cost), CPU per request', goal: 'reported', measured: '1.7× (1.6–1.8)', met: true, reportOnly: true },
  ])
  const noHeap = checkTargets([liveProxy([{ 'lanegate-live': 45, 'undici-floor': 36 }])]).filter((c) => c.what.includes('heap'))
  t.same(noHeap, [], 'no heap figures (a server without the heap preload): no heap line')
})

t.test('the relay goal is not met above 3.5× nginx, and each line needs both of its variants in the rounds', async (t) => {
  const over = checkTargets([liveProxy([{ 'lanegate-live': 54, nginx: 15 }])]).filter((c) => c.what.includes('CPU per request'))
  t.same(over.map((c) => [c.measured, c.met]), [['3.6× (3.6–3.6)', false]])
  const noNginx = checkTargets([liveProxy([{ 'lanegate-live': 50, 'undici-floor': 40 }])]).filter((c) => c.what.includes('CPU per request'))
  t.same(noNginx.map((c) => c.what), ['live relay (full chain) ÷ the Node floor, CPU per request'])
})
