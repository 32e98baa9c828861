import t from 'tap'
import type { LoadResult } from '../../bench/load-job.js'
import { hotSpots } from '../../bench/profile-summary.js'
import { markdownReport, runStamp } from '../../bench/report.js'
import type { BenchResult, ScenarioResult } from '../../bench/result-types.js'
import { runProblems, summarizeVariants } from '../../bench/summary.js'
import { checkTargets, DECIDING_METRIC } from '../../bench/targets.js'

function result (rps: number, overrides: Partial<LoadResult> = {}): LoadResult {
  return {
    requests: rps * 2,
    durationSeconds: 2,
    rps,
    statusCounts: { 200: rps * 2 },
    errors: 0,
    timeouts: 0,
    latencyMs: { p50: 1000 / rps, p90: 2000 / rps, p99: 4000 / rps, p999: 8000 / rps, max: 10, mean: 1 },
    serverCpuMicros: rps * 2 * 50,
    loadgenCpu: 0.5,
    ...overrides,
  }
}

t.test('runProblems names unexpected statuses, errors and empty runs', async (t) => {
  t.same(runProblems(result(100), [200]), [])
  t.same(runProblems(result(100, { statusCounts: { 200: 150, 401: 50 } }), [200]), ['unexpected statuses 401×50 (expected only 200)'])
  t.same(runProblems(result(100, { statusCounts: { 200: 10, 429: 190 } }), [200, 429]), [])
  t.same(runProblems(result(100, { errors: 3, timeouts: 1, firstError: 'ECONNRESET' }), [200]), ['3 request errors (1 timeout), first: ECONNRESET'])
  t.same(runProblems(result(0, { requests: 0, statusCounts: {} }), [200]), ['no response at all'])
})

t.test('ratios are taken against the baseline of the same round, then spread', async (t) => {
  const variants = [{ name: 'base', role: 'baseline' as const }, { name: 'gw', role: 'subject' as const }]
  const rounds = [
    { base: result(1000), gw: result(500) },
    { base: result(2000), gw: result(1600) },
    { base: result(1000), gw: result(600) },
  ]
  const [base, gw] = summarizeVariants(variants, rounds, { latency: false })
  t.same(base.ratio, { median: 1, min: 1, max: 1 })
  t.same(gw.ratio, { median: 0.6, min: 0.5, max: 0.8 })
  t.same(gw.rps, { median: 600, min: 500, max: 1600 })
  t.same(gw.serverCpuUsPerRequest, { median: 50, min: 50, max: 50 })
  t.same(gw.statusCounts, { 200: 5400 })
  t.equal(gw.requests, 5400)
  t.equal(gw.loadgenSaturated, false)
  t.equal(gw.addedP99Ms, undefined)
})

t.test('the latency view subtracts the baseline percentiles; a busy load generator is flagged', async (t) => {
  const variants = [{ name: 'lane', role: 'baseline' as const }, { name: 'gw', role: 'subject' as const }]
  const rounds = [{ lane: result(1000), gw: result(800, { loadgenCpu: 0.95 }) }]
  const [, gw] = summarizeVariants(variants, rounds, { latency: true })
  t.same(gw.addedP50Ms, { median: 0.25, min: 0.25, max: 0.25 })
  t.same(gw.addedP99Ms, { median: 1, min: 1, max: 1 })
  t.same(gw.addedP999Ms, { median: 2, min: 2, max: 2 })
  t.same([gw.p90Ms, gw.p999Ms, gw.maxMs], [{ median: 2.5, min: 2.5, max: 2.5 }, { median: 10, min: 10, max: 10 }, { median: 10, min: 10, max: 10 }])
  t.equal(gw.loadgenSaturated, true)
  t.equal(gw.loadgenCpuMax, 0.95)
  const [, throughput] = summarizeVariants(variants, rounds, { latency: false })
  t.same([throughput.p999Ms, throughput.addedP999Ms], [undefined, undefined], 'throughput scenarios leave p99.9 out')
})

t.test('issue 24 target: the live proxy\'s added p99 at c=1 against the best Node peer of each round; p99.9 reported', async (t) => {
  const run = (round: number, variant: string, p99: number, p999: number) => ({ round, variant, result: result(1000, { latencyMs: { p50: 0.1, p90: 0.2, p99, p999, max: 20, mean: 0.1 } }) })
  const latency: ScenarioResult = {
    ...scenario('latency-c1', 'latency', []),
    runs: [
      // Round 1: fast-gateway best (+0.4), lanegate +0.3. Round 2: http-proxy-3 best (+0.5), lanegate +0.9.
      // Round 3: only http-proxy-3 ran (+0.6), lanegate +0.5. Round 4: no Node peer: left out.
      run(1, 'lane-direct', 0.5, 1), run(1, 'lanegate-live', 0.8, 4), run(1, 'fast-gateway', 0.9, 3), run(1, 'http-proxy-3', 1.2, 5), run(1, 'nginx', 0.6, 2),
      run(2, 'lane-direct', 0.5, 1), run(2, 'lanegate-live', 1.4, 3), run(2, 'fast-gateway', 1.5, 6), run(2, 'http-proxy-3', 1.0, 2.5),
      run(3, 'lane-direct', 0.5, 1), run(3, 'lanegate-live', 1.0, 2), run(3, 'http-proxy-3', 1.1, 2),
      run(4, 'lane-direct', 0.5, 1), run(4, 'lanegate-live', 9, 9),
    ],
  }
  const checks = checkTargets([latency]).filter((c) => c.what.includes('best Node peer'))
  t.same(checks, [
    {
      scenario: 'latency-c1',
      what: 'added p99 at c=1 of the live proxy minus the best Node peer\'s (fast-gateway, http-proxy-3), same rounds',
      goal: '≤ 0 ms',
      measured: '-0.1 ms (-0.1–0.4); added p99: lanegate 0.5 ms (0.3–0.9), best Node peer 0.5 ms (0.4–0.6) (fast-gateway best in 1, http-proxy-3 best in 2 of 3 rounds)',
      met: true,
    },
    {
      scenario: 'latency-c1',
      what: 'added p99.9 at c=1 of the live proxy minus the best Node peer\'s (fast-gateway, http-proxy-3), same rounds',
      goal: '≤ 0 ms (reported)',
      measured: '0.5 ms (0–1); added p99.9: lanegate 2 ms (1–3), best Node peer 1.5 ms (1–2) (fast-gateway best in 1, http-proxy-3 best in 2 of 3 rounds)',
      met: false,
      reportOnly: true,
    },
  ])
  const noNodePeer = { ...latency, runs: latency.runs.filter((r) => r.variant !== 'fast-gateway' && r.variant !== 'http-proxy-3') }
  t.same(checkTargets([noNodePeer]).filter((c) => c.what.includes('best Node peer')), [], 'no Node peer in the rounds: no line')
})

t.test('the latency report gives p99.9 and max, each server\'s GC pauses (nginx: none, not Node) and the gateway\'s tail', async (t) => {
  const variants = summarizeVariants([{ name: 'lane-direct', role: 'baseline' }, { name: 'lanegate-live', role: 'subject' }, { name: 'nginx', role: 'peer' }],
    [{ 'lane-direct': result(1000), 'lanegate-live': result(500), nginx: result(800) }], { latency: true })
  const spreadOf = (v: number) => ({ median: v, min: v, max: v })
  const latency: ScenarioResult = {
    ...scenario('latency-c1', 'latency', variants),
    connections: 1,
    samplesPerRound: 20_000,
    gc: [
      { variant: 'lane-direct', server: 'lane', node: true, count: spreadOf(40), totalMs: spreadOf(20), longestMs: { median: 2, min: 1.5, max: 3 }, tail: { samples: 400, duringServerGc: 6, serverByChance: 25.5 }, incompleteRounds: 0 },
      {
        variant: 'lanegate-live', server: 'gateway-main', node: true, count: spreadOf(37), totalMs: spreadOf(33), longestMs: spreadOf(1.5), youngGenerationMB: { median: 8, min: 4, max: 16 },
        upstream: { name: 'lane', count: spreadOf(44), totalMs: spreadOf(19), longestMs: spreadOf(1) },
        pauseAgainstSpread: { pausesPer100Requests: { median: 0.99, min: 0.95, max: 1.1 }, meanPauseMs: spreadOf(0.495), p99MinusP50Ms: { median: 0.586, min: 0.52, max: 0.83 } },
        tail: { samples: 400, duringServerGc: 66, serverGcKinds: { major: 4, minor: 62 }, serverByChance: 6.6, duringUpstreamGc: 5, outsideServerGc: { outside: 334, afterPause: 40, afterPauseByChance: 12.5, inEpisode: 90, inEpisodeByChance: 30 } }, incompleteRounds: 1,
      },
      { variant: 'nginx', server: 'nginx', node: false, upstream: { name: 'lane', count: spreadOf(30), totalMs: spreadOf(15), longestMs: spreadOf(1) }, tail: { samples: 200, duringServerGc: 0, serverByChance: 0, duringUpstreamGc: 29 }, incompleteRounds: 0 },
    ],
  }
  const md = markdownReport({
    harness: 'lanegate-bench', schemaVersion: 1, startedAt: 'x', finishedAt: 'y',
    machine: { cpus: 2, cpuModel: 'Test CPU', node: 'v20', platform: 'linux x64', pinned: true, serverCore: 0, loadgenCore: 1 },
    options: {}, scenarios: [latency], targets: [], failures: [], warnings: [],
  })
  t.match(md, 'Each round: 20000 responses per variant (p99 rests on the 200 slowest, p99.9 on the 20 slowest).')
  t.match(md, '| variant | role | p50 ms | p90 ms | p99 ms | p99.9 ms | max ms | added p50 ms | added p99 ms | added p99.9 ms |')
  t.match(md, '| lanegate-live | subject | 2 | 4 | 8 | 16 | 10 | 1 | 4 | 8 | 500 |')
  t.match(md, '| variant | server | GC pauses | GC ms | longest pause ms | young generation MB | lane GC pauses / ms / longest |')
  t.match(md, '| lane-direct | lane | 40 | 20 | 2 (1.5–3) | – | – | 400 | 6 | 25.5 | – |', 'a server that did not report its young generation: –')
  t.match(md, '| lanegate-live | gateway-main | 37 | 33 | 1.5 | 8 (4–16) | 44 / 19 / 1 | 400 | 66 | 6.6 | 5 |')
  t.match(md, '| nginx | nginx | not Node: no GC to report | – | – | – | 30 / 15 / 1 | 200 | – | – | 29 |')
  t.match(md, '| variant | GC pauses per 100 requests | mean pause ms | p99 − p50 ms |')
  const spreadRows = md.split('\n').filter((line) => /^\| [\w-]+ \| [\d.]+( \([\d.–]+\))? \| [\d.]+ \| [\d.]+( \([\d.–]+\))? \|$/.test(line))
  t.same(spreadRows, ['| lanegate-live | 0.99 (0.95–1.1) | 0.495 | 0.586 (0.52–0.83) |'], 'where p99 sits: only for a variant with the figures (not an older result, not nginx)')
  t.match(md, 'A GC ring overran in some rounds (figures a floor): lanegate-live 1.')
  t.match(md, '| variant | met no GC pause | after a pause | by chance | in an episode | by chance |')
  const outsideRows = md.split('\n').filter((line) => /^\| [\w-]+ \| \d+ \| \d+ \| [\d.]+ \| \d+ \| [\d.]+ \|$/.test(line))
  t.same(outsideRows, ['| lanegate-live | 334 | 40 | 12.5 | 90 | 30 |'], 'the tail that met no GC, after a pause and in an episode; no row for a variant without the figures (an older result), nor for nginx')
  t.match(md, 'Of the 400 samples above p99 of lanegate-live (all rounds), 66 started, ended or ran through a gateway GC pause (6.6 would by chance; by the pause\'s kind: minor 62, major 4); 5 met a GC pause of the lane.')
})

/** Round `round`'s run of `variant` at `cpuPerRequest` µs of server CPU per request. */
function run (round: number, variant: string, cpuPerRequest: number) {
  return { round, variant, result: result(1000, { serverCpuMicros: 2000 * cpuPerRequest }) }
}

function scenario (id: string, kind: ScenarioResult['kind'], variants: ScenarioResult['variants']): ScenarioResult {
  return { id, title: id, kind, baseline: variants[0]?.name, connections: 50, variants, runs: [], skipped: [] }
}

t.test('checkTargets compares each scenario that ran with its issue-6 target, and the report shows them', async (t) => {
  const auth = summarizeVariants([{ name: 'fastify-hello', role: 'baseline' }, { name: 'lanegate-auth-get', role: 'subject' }],
    [{ 'fastify-hello': result(1000), 'lanegate-auth-get': result(850) }], { latency: false })
  const token = summarizeVariants([{ name: 'fastify-hello-post', role: 'baseline' }, { name: 'lanegate-token', role: 'subject' }],
    [{ 'fastify-hello-post': result(9000), 'lanegate-token': result(4000) }], { latency: false })
  const scenarios = [scenario('auth-get', 'throughput', auth), scenario('token', 'throughput', token)]
  const targets = checkTargets(scenarios)
  t.same(targets, [
    { scenario: 'auth-get', what: 'authenticated in-process GET ÷ bare fastify', goal: '≥ 0.8× (reported)', measured: '0.85× (0.85–0.85)', met: true, reportOnly: true },
    { scenario: 'token', what: 'tokens issued per second, one core, known client', goal: '≥ 5000/s', measured: '4000/s (4000–4000)', met: false },
  ])
  const report: BenchResult = {
    harness: 'lanegate-bench',
    schemaVersion: 1,
    startedAt: '2026-11-22T05:40:12.000Z',
    finishedAt: '2026-11-22T05:41:12.000Z',
    machine: { cpus: 2, cpuModel: 'Test CPU', node: 'v20', platform: 'linux x64', pinned: true, serverCore: 0, loadgenCore: 1 },
    options: { rounds: 1 },
    scenarios,
    targets,
    failures: ['token / lanegate-token (round 1/1): unexpected statuses 500×1 (expected only 200)'],
    warnings: [],
  }
  const md = markdownReport(report)
  t.match(md, '| lanegate-auth-get | subject | 850 | 0.85 | 1.176 | 4.706 | 50 | – | – | 50% | 200×1700 |')
  t.match(md, '| token | tokens issued per second, one core, known client | ≥ 5000/s | 4000/s (4000–4000) | no |')
  t.match(md, '### FAILURES\n\n- token / lanegate-token (round 1/1): unexpected statuses 500×1')
  t.match(md, 'servers pinned to core 0, load generator to core 1')
})

t.test('issue 16 targets: auth-get against the same answer and the c=1 tail against nginx, round by round', async (t) => {
  const run = (round: number, variant: string, rps: number, p99: number) => ({ round, variant, result: result(rps, { latencyMs: { p50: 0.1, p90: 0.2, p99, p999: p99 * 2, max: 5, mean: 0.1 } }) })
  const auth: ScenarioResult = {
    ...scenario('auth-get', 'throughput', []),
    runs: [
      run(1, 'lanegate-auth-get', 900, 1), run(1, 'fastify-same-response', 1000, 1),
      run(2, 'lanegate-auth-get', 800, 1), run(2, 'fastify-same-response', 1000, 1),
      run(3, 'lanegate-auth-get', 700, 1), run(3, 'fastify-same-response', 1000, 1),
    ],
  }
  const latency: ScenarioResult = {
    ...scenario('latency-c1', 'latency', []),
    runs: [
      run(1, 'lane-direct', 1000, 0.5), run(1, 'lanegate-live', 800, 0.9), run(1, 'nginx', 900, 0.8),
      run(2, 'lane-direct', 1000, 0.5), run(2, 'lanegate-live', 800, 1.4), run(2, 'nginx', 900, 1.3),
      run(3, 'lane-direct', 1000, 0.5), run(3, 'lanegate-live', 800, 2.0), run(3, 'nginx', 900, 0.9),
    ],
  }
  t.same(checkTargets([auth, latency]), [
    { scenario: 'auth-get', what: 'authenticated in-process GET ÷ bare fastify sending the same answer', goal: '≥ 0.85×', measured: '0.8× (0.7–0.9)', met: false },
    { scenario: 'auth-get', what: 'the same, by CPU per request (fastify\'s ÷ the gateway\'s)', goal: '≥ 0.85× (reported)', measured: '1× (1–1)', met: true, reportOnly: true },
    { scenario: 'latency-c1', what: 'added p99 at c=1 of the live proxy minus nginx\'s, same rounds', goal: '≤ 0.2 ms', measured: '0.1 ms (0.1–1.1)', met: true },
  ])
  const md = markdownReport({
    harness: 'lanegate-bench', schemaVersion: 1, startedAt: 'x', finishedAt: 'y',
    machine: { cpus: 2, cpuModel: 'Test CPU', node: 'v20', platform: 'linux x64', pinned: true, serverCore: 0, loadgenCore: 1 },
    options: {}, scenarios: [], failures: [], warnings: [],
    targets: [{ scenario: 'auth-get', what: 'w', goal: 'g', measured: 'm', met: false, reportOnly: true }],
  })
  t.match(md, '| auth-get | w | g | m | – (no) |')
  t.same(checkTargets([{ ...latency, runs: latency.runs.filter((r) => r.variant !== 'nginx') }]), [], 'no nginx in the rounds: no tail check')
})

t.test('auth-get against the same answer: a round whose load generator saturated is taken by CPU per request', async (t) => {
  // Both sides capped by the load generator at about the same req/s: their ratio (0.98) says nothing of the servers.
  const run = (round: number, variant: string, rps: number, cpuPerRequest: number, loadgenCpu: number) =>
    ({ round, variant, result: result(rps, { serverCpuMicros: rps * 2 * cpuPerRequest, loadgenCpu }) })
  const auth: ScenarioResult = {
    ...scenario('auth-get', 'throughput', []),
    runs: [
      run(1, 'lanegate-auth-get', 980, 50, 0.95), run(1, 'fastify-same-response', 1000, 35, 0.96),
      run(2, 'lanegate-auth-get', 700, 50, 0.6), run(2, 'fastify-same-response', 1000, 35, 0.8),
      run(3, 'lanegate-auth-get', 990, 40, 0.7), run(3, 'fastify-same-response', 1000, 36, 0.93),
    ],
  }
  t.same(checkTargets([auth]), [
    { scenario: 'auth-get', what: 'authenticated in-process GET ÷ bare fastify sending the same answer', goal: '≥ 0.85×', measured: '0.7× (0.7–0.9); 2 of 3 rounds by CPU per request (the load generator saturated its core)', met: false },
    { scenario: 'auth-get', what: 'the same, by CPU per request (fastify\'s ÷ the gateway\'s)', goal: '≥ 0.85× (reported)', measured: '0.7× (0.7–0.9)', met: false, reportOnly: true },
  ])
})

t.test('issue 21 target: HTTPS keep-alive ÷ plain, with nginx\'s own HTTPS ÷ plain of the same rounds beside it', async (t) => {
  const run = (round: number, variant: string, rps: number, cpuPerRequest: number) => ({ round, variant, result: result(rps, { serverCpuMicros: rps * 2 * cpuPerRequest }) })
  const variants = summarizeVariants([{ name: 'lanegate-auth-get', role: 'baseline' }, { name: 'lanegate-auth-get-https', role: 'subject' }],
    [{ 'lanegate-auth-get': result(1000), 'lanegate-auth-get-https': result(900) }, { 'lanegate-auth-get': result(1000), 'lanegate-auth-get-https': result(850) }, { 'lanegate-auth-get': result(1000), 'lanegate-auth-get-https': result(800) }], { latency: false })
  const tls: ScenarioResult = {
    ...scenario('tls', 'throughput', variants),
    runs: [
      run(1, 'lanegate-auth-get', 1000, 20), run(1, 'lanegate-auth-get-https', 850, 24), run(1, 'nginx', 1000, 10), run(1, 'nginx-https', 800, 12.5),
    ],
  }
  t.same(checkTargets([tls]).filter((c) => c.scenario === 'tls'), [{
    scenario: 'tls',
    what: 'authenticated GET over HTTPS keep-alive ÷ over plain HTTP, same rounds',
    goal: '≥ 0.9×',
    measured: '0.85× (0.8–0.9; CPU per request 0.833×); nginx\'s HTTPS ÷ plain, same rounds: 0.8× (CPU per request 0.8×)',
    met: false,
  }])
})

t.test('issue 16 Redis target: held by the pre-counting variant; the exact one (a round trip per request) is reported', async (t) => {
  const variants = summarizeVariants([
    { name: 'lanegate-auth-get', role: 'baseline' },
    { name: 'lanegate-auth-get-redis-synced', role: 'subject' },
    { name: 'lanegate-auth-get-redis', role: 'subject' },
  ], [{ 'lanegate-auth-get': result(1000), 'lanegate-auth-get-redis-synced': result(850), 'lanegate-auth-get-redis': result(470) }], { latency: false })
  t.same(checkTargets([scenario('auth-get-redis', 'throughput', variants)]), [
    { scenario: 'auth-get-redis', what: 'auth-get with Redis limits pre-counted (sync every 50 ms) ÷ with the memory limiter', goal: '≥ 0.6×', measured: '0.85× (0.85–0.85)', met: true },
    { scenario: 'auth-get-redis', what: 'auth-get with Redis limits, a round trip per request (exact) ÷ with the memory limiter', goal: '≥ 0.6× (reported)', measured: '0.47× (0.47–0.47)', met: false, reportOnly: true },
  ])
})

t.test('a soak is flat when its last RSS sample is within 10 % of its first and none passes 200 MB', async (t) => {
  const MB = 1024 * 1024
  const memoryScenario = (rss: number[]): ScenarioResult => ({
    ...scenario('memory', 'memory', []),
    memory: {
      tokens: 100_000,
      requests: 1_000_000,
      rssAtStart: 100 * MB,
      rssAfterTokens: 150 * MB,
      rssAfterRequests: rss[0] ?? 0,
      peakRss: Math.max(...rss),
      tokenIssueSeconds: 20,
      load: result(10_000),
      soak: { minutes: 10, samples: rss.map((bytes, i) => ({ seconds: i * 30, rss: bytes })), requests: 600_000, failures: 0 },
    },
  })
  const flat = checkTargets([memoryScenario([180 * MB, 185 * MB, 183 * MB])])
  t.same(flat[1], { scenario: 'memory', what: 'RSS flat across a 10-minute soak', goal: 'last ≤ first + 10%, all ≤ 200 MB', measured: '180.0 → 183.0 MB (highest 185.0 MB)', met: true })
  t.equal(checkTargets([memoryScenario([150 * MB, 160 * MB, 170 * MB])])[1]?.met, false, 'growing by 13 %')
  t.equal(checkTargets([memoryScenario([190 * MB, 205 * MB, 190 * MB])])[1]?.met, false, 'over 200 MB on the way')
  const md = markdownReport({
    harness: 'lanegate-bench', schemaVersion: 1, startedAt: 'x', finishedAt: 'y',
    machine: { cpus: 2, cpuModel: 'Test CPU', node: 'v20', platform: 'linux x64', pinned: true, serverCore: 0, loadgenCore: 1 },
    options: {}, scenarios: [memoryScenario([180 * MB, 185 * MB])], targets: flat, failures: [], warnings: [],
  })
  t.match(md, 'Soak (10 min more, 600000 requests, 0 failures), RSS MB by second: 0 s 180 · 30 s 185.')
})

t.test('runStamp is a file-name-safe UTC time', async (t) => {
  t.equal(runStamp(new Date('2026-11-22T05:40:12.345Z')), '2026-11-22T05-40-12Z')
})

t.test('hotSpots ranks self time of busy samples by function and by file, idle apart', async (t) => {
  const frame = (functionName: string, url: string, lineNumber = 0) => ({ functionName, url, lineNumber })
  const spots = hotSpots({
    startTime: 0,
    endTime: 1,
    nodes: [
      { id: 1, callFrame: frame('(idle)', ''), hitCount: 50 },
      { id: 2, callFrame: frame('verify', 'file:///repo/src/auth/token-verifier.js', 9), hitCount: 30 },
      { id: 3, callFrame: frame('other', 'file:///repo/src/auth/token-verifier.js', 40), hitCount: 10 },
      { id: 4, callFrame: frame('', 'node:net'), hitCount: 10 },
    ],
  }, 2)
  t.same(spots, {
    functions: [{ where: 'verify /repo/src/auth/token-verifier.js:10', share: 0.6 }, { where: 'other /repo/src/auth/token-verifier.js:41', share: 0.2 }],
    files: [{ where: '/repo/src/auth/token-verifier.js', share: 0.8 }, { where: 'node:net', share: 0.2 }],
    idle: 0.5,
  })
})

t.test('the token goal: the token endpoint\'s CPU per request less one signature\'s, against bare fastify\'s POST, round by round', async (t) => {
  const token: ScenarioResult = {
    ...scenario('token', 'throughput', []),
    runs: [
      run(1, 'fastify-hello-post', 40), run(1, 'lanegate-token', 110), run(1, 'token-sign-only', 50),
      run(2, 'fastify-hello-post', 40), run(2, 'lanegate-token', 130), run(2, 'token-sign-only', 50),
      run(3, 'fastify-hello-post', 50), run(3, 'lanegate-token', 120), run(3, 'token-sign-only', 55),
      // No sign loop in this round: left out.
      run(4, 'fastify-hello-post', 40), run(4, 'lanegate-token', 400),
    ],
  }
  t.same(checkTargets([token]).filter((c) => c.what.includes('signature')), [{
    scenario: 'token',
    what: 'token endpoint CPU per request less one signature\'s ÷ bare fastify POST\'s, same rounds',
    goal: '≤ 1.5×',
    measured: '1.5× (1.3–2); medians: token 120 µs, signature 50 µs, bare POST 40 µs',
    met: true,
  }])
  const noLoop = { ...token, runs: token.runs.filter((r) => r.variant !== 'token-sign-only') }
  t.same(checkTargets([noLoop]).filter((c) => c.what.includes('signature')), [], 'without the sign loop: no line')
})

t.test('the report names the deciding metric before its tables and gives heap bytes per request beside CPU', async (t) => {
  const rounds = [
    { 'lane-direct': result(1000, { serverHeapBytes: 2000 * 300 }), 'lanegate-live': result(500, { serverHeapBytes: 1000 * 2600 }), nginx: result(800) },
    { 'lane-direct': result(1000, { serverHeapBytes: 2000 * 320 }), 'lanegate-live': result(500, { serverHeapBytes: 1000 * 2400 }), nginx: result(800) },
  ]
  const variants = summarizeVariants([{ name: 'lane-direct', role: 'baseline' }, { name: 'lanegate-live', role: 'subject' }, { name: 'nginx', role: 'peer' }], rounds, { latency: false })
  t.same(variants.map((v) => v.heapBytesPerRequest), [{ median: 310, min: 300, max: 320 }, { median: 2500, min: 2400, max: 2600 }, undefined])
  const md = markdownReport({
    harness: 'lanegate-bench', schemaVersion: 1, startedAt: 'x', finishedAt: 'y',
    machine: { cpus: 2, cpuModel: 'Test CPU', node: 'v20', platform: 'linux x64', pinned: true, serverCore: 0, loadgenCore: 1 },
    options: {}, decidingMetric: DECIDING_METRIC, scenarios: [scenario('live-proxy', 'throughput', variants)], targets: [], failures: [], warnings: [],
  })
  t.match(md, `Deciding metric, named before the run: ${DECIDING_METRIC}. Req/s, latency and heap bytes per request are reported beside it.`)
  t.ok(md.indexOf('Deciding metric') < md.indexOf('### live-proxy'), 'named before the tables')
  t.match(md, '| variant | role | req/s | ratio to baseline | p50 ms | p99 ms | server CPU µs/req | heap B/req | upstream CPU µs/req | load gen CPU | statuses |')
  t.match(md, '| lanegate-live | subject | 500 | 0.5 | 2 | 8 | 50 | 2500 (2400–2600) | – | 50% | 200×2000 |')
  t.match(md, '| nginx | peer | 800 | 0.8 | 1.25 | 5 | 50 | – | – | 50% | 200×3200 |', 'nginx, not Node: no heap figure')
})

t.test('external-auth: server CPU per request paired within each round, held to at most 10 % over plain auth-get', async (t) => {
  // Round 2 is slow for every variant (a loaded machine): the per-round ratio stays near 1 where the medians alone would not.
  const externalAuth: ScenarioResult = {
    ...scenario('external-auth', 'throughput', []),
    runs: [
      run(1, 'lanegate-auth-get', 50), run(1, 'lanegate-auth-get-external-auth', 52), run(1, 'lanegate-auth-get-twin', 49),
      run(2, 'lanegate-auth-get', 300), run(2, 'lanegate-auth-get-external-auth', 318), run(2, 'lanegate-auth-get-twin', 306),
      run(3, 'lanegate-auth-get', 60), run(3, 'lanegate-auth-get-external-auth', 63), run(3, 'lanegate-auth-get-twin', 61),
      // Plain auth-get alone in this round: left out.
      run(4, 'lanegate-auth-get', 20),
    ],
  }
  t.same(checkTargets([externalAuth]), [{
    scenario: 'external-auth',
    what: 'auth-get with external-auth (decision cache hit) server CPU per request over plain auth-get\'s, same rounds',
    goal: '≤ +10 %',
    measured: '5.0 % (4.0…6.0 %; 63 vs 60 µs; a second plain process: 1.7 %)',
    met: true,
  }])
  const noTwin = { ...externalAuth, runs: externalAuth.runs.filter((r) => r.variant !== 'lanegate-auth-get-twin') }
  t.same(checkTargets([noTwin]).map((c) => c.measured), ['5.0 % (4.0…6.0 %; 63 vs 60 µs)'], 'without the twin: no control beside it')
  const plainOnly = { ...externalAuth, runs: externalAuth.runs.filter((r) => r.variant === 'lanegate-auth-get') }
  t.same(checkTargets([plainOnly]), [], 'without the subject: no line')
})

t.test('issue 44 targets: the transformed GETs judged by CPU per request against the plain relay of the same round', async (t) => {
  // The load generator caps every variant near the same rate: req/s would call the rename as cheap as the plain relay.
  const run = (round: number, variant: string, rps: number, cpuPerRequest: number) => ({ round, variant, result: result(rps, { serverCpuMicros: rps * 2 * cpuPerRequest }) })
  const transform: ScenarioResult = {
    ...scenario('transform', 'throughput', []),
    runs: [
      run(1, 'lanegate-proxy-plain', 1000, 100), run(1, 'lanegate-transform-rename', 1000, 125), run(1, 'lanegate-transform-soap', 500, 200),
      run(2, 'lanegate-proxy-plain', 1000, 100), run(2, 'lanegate-transform-rename', 950, 160), run(2, 'lanegate-transform-soap', 600, 160),
      run(3, 'lanegate-proxy-plain', 1000, 120), run(3, 'lanegate-transform-rename', 1000, 150), run(3, 'lanegate-transform-soap', 400, 300),
    ],
  }
  t.same(checkTargets([transform]), [
    { scenario: 'transform', what: 'GET with the answer\'s JSON fields renamed: the plain relay\'s CPU per request ÷ its own (same gateway), same rounds', goal: '≥ 0.85×', measured: '0.8× (0.625–0.8); by req/s 1× (0.95–1)', met: false },
    { scenario: 'transform', what: 'GET as a JSON → SOAP → JSON call: the plain relay\'s CPU per request ÷ its own (same gateway), same rounds', goal: '≥ 0.5×', measured: '0.5× (0.4–0.625); by req/s 0.5× (0.4–0.6)', met: true },
  ])
})
