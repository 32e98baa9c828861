import { join } from 'node:path'
import type { LoadJob, LoadResult } from './load-job.js'
import { LATENCY_TAIL, LATENCY_TAIL_QUICK, type BenchOptions } from './options.js'
import type { LoadWorker } from './processes.js'
import { memoryOf } from './proc-stat.js'
import type { ConsoleMeasurement, RunGc, ScenarioResult, SoakMeasurement } from './result-types.js'
import { askGcPauses } from './gc-client.js'
import { askAllocatedBytes } from './heap-client.js'
import { runSignLoop } from './sign-loop-run.js'
import type { GcWindowPauses } from './gc-ring.js'
import { runGc, summarizeGc } from './gc-summary.js'
import { consolePairs, gatewayTreeWithout, measureIdle } from './console-cost.js'
import { GATEWAY_CONTENT_PATH, SCENARIO_TITLES, type PreparedVariant, type ScenarioPlan } from './scenarios.js'
import type { RunningServer, ServerSet } from './servers.js'
import { rotatedOrder, samplesAbove } from './stats.js'
import { LOADGEN_SATURATION, runProblems, summarizeVariants } from './summary.js'
import { CONTENT_CLIENT, issueTokens } from './tokens.js'

/** Where a scenario reports progress, failures (the run fails) and warnings (the run is flagged). */
export interface RunLog {
  progress (line: string): void
  fail (message: string): void
  warn (message: string): void
}

/** Formats a number that may have crossed IPC as null (JSON has no NaN: a run without responses). */
function num (value: number | null, digits: number): string {
  return value === null || !Number.isFinite(value) ? 'n/a' : value.toFixed(digits)
}

function describe (result: LoadResult): string {
  const cpu = result.requests === 0 ? 'n/a' : (result.serverCpuMicros / result.requests).toFixed(1)
  const p999 = result.window === undefined ? '' : `, p99.9 ${num(result.latencyMs.p999, 3)} ms, max ${num(result.latencyMs.max, 3)} ms`
  const heap = result.serverHeapBytes === undefined || result.requests === 0 ? '' : `, heap ${Math.round(result.serverHeapBytes / result.requests)} B/req`
  return `${Math.round(result.rps)} req/s, p50 ${num(result.latencyMs.p50, 3)} ms, p99 ${num(result.latencyMs.p99, 3)} ms${p999}, ` +
    `server ${cpu} µs/req${heap}, load generator ${(result.loadgenCpu * 100).toFixed(0)}% of a core`
}

function describeGc (gc: RunGc): string {
  const own = gc.server === null
    ? 'server not Node (no GC to report)'
    : `server ${gc.server.count} GC pauses, ${gc.server.totalMs} ms, longest ${gc.server.longestMs} ms${gc.server.youngGenerationBytes === undefined ? '' : `, young generation ${(gc.server.youngGenerationBytes / (1024 * 1024)).toFixed(1)} MB`}${gc.server.complete ? '' : ' (ring overran: a floor)'}`
  const met = [
    ...(gc.server === null ? [] : [`${gc.tail.duringServerGc} met a server GC pause (${gc.tail.serverByChance} by chance; ${JSON.stringify(gc.tail.serverGcKinds ?? {})})`]),
    ...(gc.tail.duringUpstreamGc === undefined ? [] : [`${gc.tail.duringUpstreamGc} a lane GC pause`]),
  ]
  return `${own}; of ${gc.tail.samples} samples above p99, ${met.length === 0 ? 'none set beside a GC' : met.join(', ')}`
}

/**
 * What one measured run of `variant` is: `duration` seconds, or, in a sample-counted run of the latency scenario
 * (`samples`), that many responses, each stamped so its tail can be set beside the servers' GC pauses.
 */
function jobFor (plan: ScenarioPlan, variant: PreparedVariant, duration: number, samples?: number): LoadJob {
  return {
    ...variant.request,
    connections: plan.connections,
    duration,
    ...(samples === undefined ? {} : { amount: samples, timeTail: true }),
    serverPid: variant.server.pid,
    ...(variant.upstream === undefined ? {} : { upstreamPid: variant.upstream.pid }),
  }
}

async function measure (worker: LoadWorker, plan: ScenarioPlan, variant: PreparedVariant, duration: number, label: string, log: RunLog, samples?: number): Promise<LoadResult> {
  const heapSocket = variant.server.heapSocket
  const heapBefore = heapSocket === undefined ? undefined : await askAllocatedBytes(heapSocket)
  const run = variant.signLoop === true ? await runSignLoop(variant.server, duration) : await worker.run(jobFor(plan, variant, duration, samples))
  const result = heapSocket === undefined || heapBefore === undefined ? run : { ...run, serverHeapBytes: await askAllocatedBytes(heapSocket) - heapBefore }
  log.progress(`[${plan.id}] ${label} ${variant.name}: ${describe(result)}`)
  for (const problem of runProblems(result, variant.expect)) log.fail(`${plan.id} / ${variant.name} (${label}): ${problem}`)
  return result
}

/** The pauses a server's GC preload saw in `window`; null for a server without one (nginx: not Node). */
async function pausesOf (server: RunningServer, window: { fromMs: number, toMs: number }): Promise<GcWindowPauses | null> {
  return server.gcSocket === undefined ? null : askGcPauses(server.gcSocket, window)
}

/** A latency run's GC: asks the variant's server and upstream for their pauses during the run, and sets its tail beside them. */
async function gcOfRun (variant: PreparedVariant, result: LoadResult): Promise<RunGc | undefined> {
  if (result.window === undefined) return undefined
  const server = await pausesOf(variant.server, result.window)
  const upstream = variant.upstream === undefined ? undefined : await pausesOf(variant.upstream, result.window)
  return runGc({ server, ...(upstream === undefined ? {} : { upstream }) }, result.tail ?? [], result.window)
}

/**
 * Warm-ups of the latency scenario per variant, each on a connection of its own (`--warmup` seconds each). A Node
 * server's code settles only after it has seen a connection close and others open: in a V8 log of the gateway
 * (`--log-deopt --log-code`) behind one warm-up, the first round began with 86 TurboFan compilations and 56 deopts
 * ("wrong map" in node's streams, net and http server, as the warm-up's socket closed and the round's opened),
 * 25 more deopts when it ended and 37 compilations in round 2, then none in rounds 3–5; its round 1 cost 149 µs of
 * CPU per request against 126–136 µs, with p99 0.86 ms against 0.39–0.55 ms. Behind three warm-ups, round 1 met
 * 5 compilations and no deopt, the third warm-up already ran at the rounds' CPU per request: the churn stays out of
 * the measured rounds, for every variant alike (docs/performance.md, "Issue 24, the eleventh session").
 */
export const LATENCY_WARMUP_CONNECTIONS = 3

/**
 * Runs a throughput or latency scenario: every variant warms up, then `rounds` rounds run every variant once in
 * an order rotated by one each round; ratios are taken against the baseline of the same round.
 */
export async function runPlan (plan: ScenarioPlan, worker: LoadWorker, options: BenchOptions, log: RunLog): Promise<ScenarioResult> {
  for (const skipped of plan.skipped) log.warn(`${plan.id}: peer ${skipped.variant} skipped: ${skipped.reason}`)
  // The poller must stay out of the CPU the load generator reads for the console gateway (its process tree).
  if (plan.console !== undefined) gatewayTreeWithout(plan.console.open.pid, plan.console.poller.pid)
  const latency = plan.kind === 'latency'
  if (options.warmupSeconds > 0) {
    const connections = latency ? LATENCY_WARMUP_CONNECTIONS : 1
    for (const variant of plan.variants) {
      for (let c = 1; c <= connections; c++) {
        await measure(worker, plan, variant, options.warmupSeconds, connections === 1 ? 'warm-up' : `warm-up ${c}/${connections}`, log)
      }
    }
  }
  const tailFloor = options.quick ? LATENCY_TAIL_QUICK : LATENCY_TAIL
  if (latency && samplesAbove(options.latencySamples, 0.999) < tailFloor) {
    log.warn(`${plan.id}: ${options.latencySamples} responses per round put ${samplesAbove(options.latencySamples, 0.999)} samples above p99.9 (fewer than ${tailFloor}): its p99.9 is noise`)
  }
  const rounds: Array<Record<string, LoadResult>> = []
  const runs: ScenarioResult['runs'] = []
  for (let r = 0; r < options.rounds; r++) {
    const byVariant: Record<string, LoadResult> = {}
    for (const i of rotatedOrder(plan.variants.length, r)) {
      const variant = plan.variants[i]
      const label = `round ${r + 1}/${options.rounds}`
      const result = await measure(worker, plan, variant, options.durationSeconds, label, log, latency ? options.latencySamples : undefined)
      const gc = await gcOfRun(variant, result)
      if (gc !== undefined) log.progress(`[${plan.id}] ${label} ${variant.name}: ${describeGc(gc)}`)
      // The tail's samples served the GC count; the results file keeps the counts, not the samples.
      const kept: LoadResult = { ...result }
      delete kept.tail
      byVariant[variant.name] = kept
      runs.push({ round: r + 1, variant: variant.name, result: kept, ...(gc === undefined ? {} : { gc }) })
    }
    rounds.push(byVariant)
  }
  const variants = summarizeVariants(plan.variants, rounds, { latency })
  for (const v of variants) {
    if (v.loadgenSaturated) {
      log.warn(`${plan.id} / ${v.name}: load generator near saturation (${Math.round(v.loadgenCpuMax * 100)}% ≥ ${LOADGEN_SATURATION * 100}% of its core): its req/s is a floor, not the server's limit`)
    }
  }
  const consoleCost = plan.console === undefined ? undefined : await measureConsole(plan, rounds, options, log)
  return {
    id: plan.id,
    title: plan.title,
    kind: plan.kind,
    baseline: plan.variants.find((v) => v.role === 'baseline')?.name,
    connections: plan.connections,
    variants,
    runs,
    ...(latency
      ? {
          samplesPerRound: options.latencySamples,
          gc: summarizeGc(plan.variants.map((v) => ({ name: v.name, server: v.server.name, ...(v.upstream === undefined ? {} : { upstream: v.upstream.name }) })), runs),
        }
      : {}),
    skipped: plan.skipped,
    ...(consoleCost === undefined ? {} : { console: consoleCost }),
  }
}

/**
 * `--console`, after the rounds: the open/closed pairs of those rounds, then the idle measurement (no traffic,
 * `rounds` windows of `duration`), and the poller's tally — a console that did not answer fails the run.
 */
async function measureConsole (plan: ScenarioPlan, rounds: ReadonlyArray<Readonly<Record<string, LoadResult>>>, options: BenchOptions, log: RunLog): Promise<ConsoleMeasurement> {
  const { open, closed, poller } = plan.console as NonNullable<ScenarioPlan['console']>
  const pairs = consolePairs(plan.variants.map((v) => v.name), rounds)
  for (const p of pairs) {
    log.progress(`[${plan.id}] console open ${p.open}: ${p.openCpuUsPerRequest.median} µs/req vs closed ${p.closedCpuUsPerRequest.median} µs/req, ${p.cpuRatio.median}× (${p.rounds} rounds)`)
  }
  log.progress(`[${plan.id}] console idle: ${options.rounds} windows of ${options.durationSeconds} s, no traffic`)
  const idle = await measureIdle({ open: open.pid, closed: closed.pid, poller: poller.pid }, options.rounds, options.durationSeconds)
  log.progress(`[${plan.id}] console idle: gateway ${idle.openCpuUsPerSecond.median} µs CPU/s open, ${idle.closedCpuUsPerSecond.median} µs CPU/s closed; poller ${idle.pollerCpuUsPerSecond.median} µs CPU/s`)
  const polls = poller.polls()
  if (!polls.running) log.fail(`${plan.id} / console: the poller stopped during the scenario (see console-poller.log)`)
  if (polls.failed > 0) log.fail(`${plan.id} / console: ${polls.failed} of ${polls.ok + polls.failed} poll rounds failed, first: ${polls.firstError ?? '?'}`)
  return { pairs, idle, polls: { ok: polls.ok, failed: polls.failed } }
}

/**
 * The memory scenario: a fresh gateway issues `memoryTokens` distinct tokens, then serves `memoryRequests`
 * authenticated GETs rotating through them; RSS is read from /proc before, between and after.
 */
export async function runMemory (servers: ServerSet, worker: LoadWorker, options: BenchOptions, workDir: string, log: RunLog): Promise<ScenarioResult> {
  const gateway = await servers.gateway('memory')
  const rssAtStart = memoryOf(gateway.pid).rss
  const tokensFile = join(workDir, 'memory-tokens.txt')
  log.progress(`[memory] issuing ${options.memoryTokens} tokens`)
  const tokenIssueSeconds = await issueTokens(gateway.url, CONTENT_CLIENT, options.memoryTokens, tokensFile)
  const rssAfterTokens = memoryOf(gateway.pid).rss
  log.progress(`[memory] ${options.memoryTokens} tokens in ${tokenIssueSeconds.toFixed(1)} s; sending ${options.memoryRequests} requests`)
  const variant: PreparedVariant = {
    name: 'lanegate-auth-get',
    role: 'subject',
    server: gateway,
    request: { url: gateway.url + GATEWAY_CONTENT_PATH, method: 'GET' },
    expect: [200],
  }
  const load = await worker.run({
    ...variant.request,
    connections: options.connections,
    duration: 0,
    amount: options.memoryRequests,
    tokensFile,
    serverPid: gateway.pid,
  })
  log.progress(`[memory] ${describe(load)}`)
  for (const problem of runProblems(load, variant.expect)) log.fail(`memory / ${variant.name}: ${problem}`)
  const after = memoryOf(gateway.pid)
  const soak = options.soakMinutes > 0 ? await runSoak(worker, options, variant, tokensFile, log) : undefined
  const variants = summarizeVariants([variant], [{ [variant.name]: load }], { latency: false })
  return {
    id: 'memory',
    title: SCENARIO_TITLES.memory,
    kind: 'memory',
    connections: options.connections,
    variants,
    runs: [{ round: 1, variant: variant.name, result: load }],
    memory: {
      tokens: options.memoryTokens,
      requests: options.memoryRequests,
      rssAtStart,
      rssAfterTokens,
      rssAfterRequests: after.rss,
      peakRss: after.peak,
      tokenIssueSeconds,
      load,
      ...(soak === undefined ? {} : { soak }),
    },
    skipped: [],
  }
}

/**
 * Keeps the memory scenario's traffic going for `soakMinutes`, in runs of `soakSampleSeconds`, and reads the
 * gateway's RSS after each: a leak shows as a rising line, a bounded cache as a flat one.
 */
async function runSoak (worker: LoadWorker, options: BenchOptions, variant: PreparedVariant, tokensFile: string, log: RunLog): Promise<SoakMeasurement> {
  const started = Date.now()
  const samples = [{ seconds: 0, rss: memoryOf(variant.server.pid).rss }]
  let requests = 0
  let failures = 0
  log.progress(`[memory] soak: ${options.soakMinutes} min, RSS every ${options.soakSampleSeconds} s`)
  while (Date.now() - started < options.soakMinutes * 60_000) {
    const load = await worker.run({
      ...variant.request,
      connections: options.connections,
      duration: options.soakSampleSeconds,
      tokensFile,
      serverPid: variant.server.pid,
    })
    requests += load.requests
    failures += load.errors + load.timeouts + load.requests - (load.statusCounts['200'] ?? 0)
    const sample = { seconds: Math.round((Date.now() - started) / 1000), rss: memoryOf(variant.server.pid).rss }
    samples.push(sample)
    log.progress(`[memory] soak ${sample.seconds} s: RSS ${(sample.rss / 1024 / 1024).toFixed(1)} MB, ${load.rps.toFixed(0)} req/s`)
  }
  if (failures > 0) log.fail(`memory / soak: ${failures} responses were not 200 (or failed)`)
  return { minutes: options.soakMinutes, samples, requests, failures }
}
