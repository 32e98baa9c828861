import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import type { BenchResult } from '../../bench/result-types.js'
import { valgrindBinary } from '../../bench/callgrind.js'
import { runNode, type NodeRun } from '../helpers/run-node.js'

// The harness compiled beside this test (dist/bench/run.js for dist/test/e2e/…), so any outDir works.
const HARNESS = fileURLToPath(new URL('../../bench/run.js', import.meta.url))
const CALLGRIND_NAMES = fileURLToPath(new URL('../../bench/callgrind-names.js', import.meta.url))

function runHarness (args: string[]): Promise<NodeRun> {
  return runNode(HARNESS, args)
}

// Keeps the harness from rotting: a tiny run of one scenario through the real gateway. Timings are not asserted.
t.test('a tiny auth-get run writes a result file and a report, with only 2xx answers', async (t) => {
  const out = await mkdtemp(join(tmpdir(), 'lanegate-bench-smoke-'))
  t.teardown(() => rm(out, { recursive: true, force: true }))
  const res = await runHarness(['--scenario', 'auth-get', '--duration', '0.5', '--warmup', '0', '--rounds', '2', '--connections', '4', '--no-peers', '--out', out])
  t.equal(res.code, 0, res.stderr)

  const files = (await readdir(out)).sort()
  t.equal(files.length, 2)
  t.match(files[0], /^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\dZ\.json$/)
  t.equal(files[1], files[0].replace(/\.json$/, '.md'))

  const result = JSON.parse(await readFile(join(out, files[0]), 'utf8')) as BenchResult
  t.equal(result.harness, 'lanegate-bench')
  t.equal(result.schemaVersion, 1)
  t.same(result.failures, [])
  t.same(result.scenarios.map((s) => s.id), ['auth-get'])
  const [scenario] = result.scenarios
  t.equal(scenario.baseline, 'fastify-hello')
  t.same(scenario.variants.map((v) => [v.name, v.role]), [
    ['fastify-hello', 'baseline'], ['lanegate-auth-get', 'subject'], ['fastify-same-response', 'peer'],
    ['fastify-same-response-as-gateway', 'peer'], ['lanegate-auth-get-metrics-off', 'peer'], ['lanegate-api-key-get', 'peer'],
  ])
  t.same(scenario.runs.map((r) => r.round), [1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2])
  for (const variant of scenario.variants) {
    t.ok(variant.requests > 0, `${variant.name} got answers`)
    t.same(Object.keys(variant.statusCounts), ['200'], `${variant.name} answered only 200`)
    t.equal(variant.statusCounts['200'], variant.requests)
    for (const key of ['rps', 'ratio', 'p50Ms', 'p99Ms', 'serverCpuUsPerRequest'] as const) {
      t.same(Object.keys(variant[key]).sort(), ['max', 'median', 'min'], `${variant.name}.${key} is a spread`)
    }
  }
  // The hello-world ratio (reported), the floor against bare fastify sending the same answer and the same by CPU per
  // request (reported), api-key's CPU.
  t.same(result.targets.map((target) => [target.scenario, target.reportOnly === true]), [['auth-get', true], ['auth-get', false], ['auth-get', true], ['auth-get', false]])
  t.match(res.stdout, '### auth-get:')
  const markdown = await readFile(join(out, files[1]), 'utf8')
  t.match(markdown, '| lanegate-auth-get | subject |')
})

t.test('--console runs the subject with the console open beside it closed, and a closed twin, in every round, then both idle', async (t) => {
  const out = await mkdtemp(join(tmpdir(), 'lanegate-bench-smoke-console-'))
  t.teardown(() => rm(out, { recursive: true, force: true }))
  const res = await runHarness(['--scenario', 'auth-get', '--console', '--duration', '0.5', '--warmup', '0', '--rounds', '2', '--connections', '4', '--no-peers', '--out', out])
  t.equal(res.code, 0, res.stderr)
  const json = (await readdir(out)).find((f) => f.endsWith('.json')) as string
  const result = JSON.parse(await readFile(join(out, json), 'utf8')) as BenchResult
  t.same(result.failures, [])
  const [scenario] = result.scenarios
  t.same(scenario.variants.map((v) => [v.name, v.role]).slice(-2), [['lanegate-auth-get+console', 'peer'], ['lanegate-auth-get+closed-twin', 'peer']])
  // Open and closed in the same rounds (the earlier --console opened it on every gateway: one sitting each way).
  for (const round of [1, 2]) {
    const names = scenario.runs.filter((r) => r.round === round).map((r) => r.variant)
    t.ok(['lanegate-auth-get', 'lanegate-auth-get+console', 'lanegate-auth-get+closed-twin'].every((n) => names.includes(n)), `round ${round} ran all three: ${names.join(', ')}`)
  }
  const measured = scenario.console
  // The control: a second closed gateway of the same config, paired like the open one.
  t.same(measured?.pairs.map((p) => [p.closed, p.open, p.rounds]), [['lanegate-auth-get', 'lanegate-auth-get+console', 2], ['lanegate-auth-get', 'lanegate-auth-get+closed-twin', 2]])
  t.ok((measured?.pairs[0]?.cpuRatio.median ?? 0) > 0, 'a CPU ratio was taken')
  t.same([measured?.idle?.windows, measured?.idle?.seconds], [2, 0.5])
  t.ok((measured?.idle?.openCpuUsPerSecond.median ?? -1) >= 0, 'idle CPU read')
  t.equal(measured?.polls.failed, 0)
  t.ok((measured?.polls.ok ?? 0) >= 1, `${measured?.polls.ok} poll rounds answered`)
  const goal = result.targets.filter((target) => target.what.startsWith('gateway CPU per request with the console open'))
  t.equal(goal.length, 1, 'the issue-23 goal is checked once (the twin is not a goal of its own)')
  t.match(goal[0]?.measured, /a second closed gateway ÷ closed: [\d.]+×/)
  t.match(res.stdout, '| lanegate-auth-get | lanegate-auth-get+console | 2 |')
  t.match(res.stdout, '| lanegate-auth-get | lanegate-auth-get+closed-twin | 2 |')
})

t.test('a tiny latency-c1 run counts its samples, reports p99.9 and the GC pauses of each server with the tail beside them', async (t) => {
  const out = await mkdtemp(join(tmpdir(), 'lanegate-bench-smoke-c1-'))
  t.teardown(() => rm(out, { recursive: true, force: true }))
  const res = await runHarness(['--scenario', 'latency-c1', '--latency-samples', '300', '--warmup', '0.2', '--rounds', '2', '--no-peers', '--out', out])
  t.equal(res.code, 0, res.stderr)
  // Each variant warms up on three connections in turn (run-scenario.ts LATENCY_WARMUP_CONNECTIONS), none counted.
  const warmUps = res.stderr.split('\n').filter((line) => line.startsWith('[latency-c1] warm-up')).map((line) => /warm-up (\S+) ([\w-]+):/.exec(line)?.slice(1, 3).join(' '))
  t.same(warmUps, ['1/3 lane-direct', '2/3 lane-direct', '3/3 lane-direct', '1/3 lanegate-live', '2/3 lanegate-live', '3/3 lanegate-live'])
  t.match(res.stderr, 'put 0 samples above p99.9 (fewer than 20)', 'a round too small for p99.9 is warned about')
  const json = (await readdir(out)).find((f) => f.endsWith('.json')) as string
  const result = JSON.parse(await readFile(join(out, json), 'utf8')) as BenchResult
  t.same(result.failures, [])
  const [scenario] = result.scenarios
  t.equal(scenario.samplesPerRound, 300)
  t.same(scenario.runs.map((r) => [r.round, r.result.requests]), [[1, 300], [1, 300], [2, 300], [2, 300]], 'every run is 300 responses')
  for (const variant of scenario.variants) {
    for (const key of ['p90Ms', 'p999Ms', 'maxMs', 'addedP999Ms'] as const) {
      t.same(Object.keys(variant[key] ?? {}).sort(), ['max', 'median', 'min'], `${variant.name}.${key} is a spread`)
    }
    t.ok((variant.p999Ms?.median ?? 0) >= (variant.p99Ms.median ?? Infinity), `${variant.name}: p99.9 ≥ p99`)
  }
  for (const run of scenario.runs) {
    t.equal(run.result.tail, undefined, 'the tail\'s samples are not kept in the results file')
    t.ok(run.gc?.server !== null && (run.gc?.server?.count ?? -1) >= 0, `round ${run.round} ${run.variant}: its server's GC preload answered`)
    // 300 samples put 2 or 3 above p99 (fewer when the slowest tie).
    t.ok((run.gc?.tail.samples ?? -1) >= 0 && (run.gc?.tail.samples ?? 99) <= 3, `${run.variant}: ${run.gc?.tail.samples} samples above p99`)
  }
  t.same(scenario.gc?.map((v) => [v.variant, v.server, v.node, v.upstream?.name]), [['lane-direct', 'lane', true, undefined], ['lanegate-live', 'gateway-main', true, 'lane']])
  const markdown = await readFile(join(out, json.replace(/\.json$/, '.md')), 'utf8')
  t.match(markdown, '| p99 ms | p99.9 ms | max ms |')
  t.match(markdown, 'GC pauses seen in each server process during its runs')
  t.match(markdown, /Of the \d+ samples above p99 of lanegate-live \(all rounds\), \d+ started, ended or ran through a gateway GC pause/)
})

t.test('a tiny websocket run echoes through the gateway and the lane directly, and measures idle connections', async (t) => {
  const out = await mkdtemp(join(tmpdir(), 'lanegate-bench-smoke-ws-'))
  t.teardown(() => rm(out, { recursive: true, force: true }))
  const res = await runHarness(['--scenario', 'websocket', '--quick', '--duration', '0.5', '--warmup', '0.5', '--rounds', '1', '--no-peers', '--out', out])
  t.equal(res.code, 0, res.stderr)
  const json = (await readdir(out)).find((f) => f.endsWith('.json')) as string
  const result = JSON.parse(await readFile(join(out, json), 'utf8')) as BenchResult
  t.same(result.failures, [])
  const measured = result.scenarios[0]?.websocket
  t.same(measured?.variants.map((v) => v.name), ['lane-direct', 'lanegate-live'])
  for (const v of measured?.variants ?? []) t.ok(v.messagesPerSecond.median > 0, `${v.name} echoed messages`)
  t.ok((measured?.idleConnections ?? 0) > 0, `${measured?.idleConnections} idle connections held`)
  t.ok((measured?.rssWithIdleConnections ?? 0) > 0, 'RSS read')
  t.match(res.stdout, '| lanegate-live |')
})

// The whole file runs a bench, and servers under valgrind, more than tap's 300 s per file allow on a loaded machine
// (287 s in one CI dry run, 302 s and a timeout in the next): its own subtests' timeouts bound it instead.
t.setTimeout(900_000)

// valgrind is installed on the machine CI runs on; the skip is for a checkout elsewhere without it.
const noValgrind = valgrindBinary() === undefined && 'valgrind (with callgrind_control) is not installed: apt-get install valgrind'

t.test('--instructions counts every variant under callgrind, the lane behind a relay too, scenario after scenario', { skip: noValgrind, timeout: 600_000 }, async (t) => {
  const out = await mkdtemp(join(tmpdir(), 'lanegate-bench-smoke-instr-'))
  t.teardown(() => rm(out, { recursive: true, force: true }))
  // Six servers start under valgrind (≈ 3 min on a busy box: hence the longer timeout). Two scenarios whose servers
  // share names (lane, counted in both): the second one's dumps once overwrote the first's. Tiny on purpose: the
  // batches are not flat after 30 warm-up requests (a warning, not a failure).
  const res = await runHarness(['--scenario', 'proxy-service,live-proxy', '--instructions', '--instr-warmup', '30', '--instr-requests', '5', '--no-peers', '--out', out])
  // The harness keeps the dumps (and the logs beside them) for callgrind_annotate; a passing test drops them.
  const kept = /Callgrind dumps kept in (\S+)\/callgrind /.exec(res.stdout)?.[1]
  if (kept !== undefined && res.code === 0) t.teardown(() => rm(kept, { recursive: true, force: true }))
  t.equal(res.code, 0, res.stderr)
  t.ok(kept !== undefined, 'the report names where the dumps are')
  const json = (await readdir(out)).find((f) => f.endsWith('.json')) as string
  const result = JSON.parse(await readFile(join(out, json), 'utf8')) as BenchResult
  t.same(result.failures, [])
  t.same(result.scenarios.map((s) => [s.id, s.kind, s.baseline]), [['live-proxy', 'instructions', 'lane-direct'], ['proxy-service', 'instructions', 'lane-direct']])
  const [live, proxy] = result.scenarios.map((s) => s.instructions)
  t.same([live?.warmupRequests, live?.batchRequests], [30, 5])
  t.same(live?.variants.map((v) => [v.name, v.role]), [['lane-direct', 'baseline'], ['lanegate-live', 'subject'], ['lanegate-live-metrics-off', 'peer']])
  t.same(proxy?.variants.map((v) => [v.name, v.role]), [['lane-direct', 'baseline'], ['lanegate-proxy-service', 'subject'], ['lanegate-proxy-breaker-split', 'subject'], ['lanegate-proxy-service-twin', 'peer']])
  for (const v of [...live?.variants ?? [], ...proxy?.variants ?? []]) {
    t.same(v.batches.map((b) => b.requests), [5, 5], `${v.name}: two batches of 5`)
    t.ok(v.batches.every((b) => b.instructions > 0), `${v.name} executed instructions in each batch: ${v.batches.map((b) => b.instructions).join(', ')}`)
    t.ok(v.perRequest > 0 && (v.ratio ?? 0) > 0, `${v.name}: ${v.perRequest} instructions/request, ratio ${v.ratio}`)
  }
  const relays = [live?.variants.find((v) => v.name === 'lanegate-live'), proxy?.variants.find((v) => v.name === 'lanegate-proxy-service')]
  for (const relay of relays) t.ok((relay?.upstreamPerRequest ?? 0) > 0, `the lane behind ${relay?.name} was counted too`)
  t.same(live?.comparisons.map((c) => [c.subject, c.reference]), [['lanegate-live', 'lanegate-live-metrics-off']])
  t.same(proxy?.comparisons.map((c) => [c.subject, c.reference]), [['lanegate-proxy-breaker-split', 'lanegate-proxy-service'], ['lanegate-proxy-service-twin', 'lanegate-proxy-service']])
  t.match(res.stdout, /\| lanegate-live \| subject \| [\d.]+k \|/)

  // Each node server's perf map is kept beside its dumps (not left in /tmp), and names the gateway's JIT code in them.
  const dumps = join(kept as string, 'callgrind', 'live-proxy')
  const files = await readdir(dumps)
  t.ok(files.includes('gateway-main.callgrind.perf.map'), `the gateway's perf map is beside its dumps: ${files.join(', ')}`)
  const dump = files.find((f) => /^gateway-main\.callgrind\.\d+$/.test(f)) as string
  const named = await runNode(CALLGRIND_NAMES, [join(dumps, dump), '5', '100000'])
  t.equal(named.code, 0, named.stderr)
  t.match(named.stdout, 'gateway-main.callgrind.perf.map', 'named from the kept map')
  t.match(named.stdout, /JIT JS:\S* file:\/\/\S*\/dist\/(src|plugins)\//, 'lanegate\'s own functions among them')
})

t.test('a bad option exits 2 with the usage', async (t) => {
  const res = await runHarness(['--scenario', 'nope'])
  t.equal(res.code, 2)
  t.match(res.stderr, 'unknown scenario "nope"')
  t.match(res.stderr, '--quick')
})
