import type { BenchResult, InstructionMeasurement, ScenarioResult, VariantGc, VariantSummary } from './result-types.js'
import { samplesAbove, type Spread } from './stats.js'
import { FOLLOW_MS } from './gc-tail.js'
import { DECIDING_METRIC } from './targets.js'

const MB = 1024 * 1024

function fmt (n: number | null | undefined, digits = 3): string {
  return n === null || n === undefined || !Number.isFinite(n) ? '–' : String(Number(n.toFixed(digits)))
}

function range (s: Spread | undefined, digits = 3): string {
  if (s === undefined || s.median === null || !Number.isFinite(s.median)) return '–'
  return s.min === s.max ? fmt(s.median, digits) : `${fmt(s.median, digits)} (${fmt(s.min, digits)}–${fmt(s.max, digits)})`
}

function statuses (v: VariantSummary): string {
  return Object.entries(v.statusCounts).map(([s, n]) => `${s}×${n}`).join(' ')
}

function scenarioTable (scenario: ScenarioResult): string[] {
  const lines = [`### ${scenario.id}: ${scenario.title}`, '', `Connections: ${scenario.connections}. Baseline: ${scenario.baseline ?? '–'}.`, '']
  if (scenario.kind === 'latency') {
    if (scenario.samplesPerRound !== undefined) {
      const n = scenario.samplesPerRound
      lines.push(`Each round: ${n} responses per variant (p99 rests on the ${samplesAbove(n, 0.99)} slowest, p99.9 on the ${samplesAbove(n, 0.999)} slowest).`, '')
    }
    lines.push('| variant | role | p50 ms | p90 ms | p99 ms | p99.9 ms | max ms | added p50 ms | added p99 ms | added p99.9 ms | req/s | server CPU µs/req | heap B/req | load gen CPU |', '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|')
    for (const v of scenario.variants) {
      lines.push(`| ${v.name} | ${v.role} | ${range(v.p50Ms)} | ${range(v.p90Ms)} | ${range(v.p99Ms)} | ${range(v.p999Ms)} | ${range(v.maxMs)} | ${range(v.addedP50Ms)} | ${range(v.addedP99Ms)} | ${range(v.addedP999Ms)} | ${range(v.rps, 0)} | ${range(v.serverCpuUsPerRequest, 1)} | ${range(v.heapBytesPerRequest, 0)} | ${fmt(v.loadgenCpuMax * 100, 0)}%${v.loadgenSaturated ? ' ⚠' : ''} |`)
    }
    if (scenario.gc !== undefined) lines.push(...gcTable(scenario.gc))
  } else if (scenario.kind !== 'websocket' && scenario.kind !== 'instructions' && scenario.kind !== 'config-push') {
    lines.push('| variant | role | req/s | ratio to baseline | p50 ms | p99 ms | server CPU µs/req | heap B/req | upstream CPU µs/req | load gen CPU | statuses |', '|---|---|---|---|---|---|---|---|---|---|---|')
    for (const v of scenario.variants) {
      lines.push(`| ${v.name} | ${v.role} | ${range(v.rps, 0)} | ${v.role === 'baseline' ? '1' : range(v.ratio)} | ${range(v.p50Ms)} | ${range(v.p99Ms)} | ${range(v.serverCpuUsPerRequest, 1)} | ${range(v.heapBytesPerRequest, 0)} | ${range(v.upstreamCpuUsPerRequest, 1)} | ${fmt(v.loadgenCpuMax * 100, 0)}%${v.loadgenSaturated ? ' ⚠' : ''} | ${statuses(v)} |`)
    }
  }
  const primaries = scenario.variants.filter((v) => v.primaryCpuUsPerRequest !== undefined && v.name !== 'lanegate-workers-1')
  if (primaries.length > 0) {
    lines.push('', `Of the server CPU per request, the workers' primary process used: ${primaries.map((v) => `${v.name} ${range(v.primaryCpuUsPerRequest, 1)} µs`).join(', ')} (every process pinned to the baseline's core).`)
  }
  if (scenario.memory !== undefined) {
    const m = scenario.memory
    lines.push('', `RSS: ${fmt(m.rssAtStart / MB, 1)} MB at start → ${fmt(m.rssAfterTokens / MB, 1)} MB after issuing ${m.tokens} tokens (${fmt(m.tokenIssueSeconds, 1)} s) → ${fmt(m.rssAfterRequests / MB, 1)} MB after ${m.requests} requests (peak ${fmt(m.peakRss / MB, 1)} MB).`)
    if (m.soak !== undefined) {
      lines.push('', `Soak (${fmt(m.soak.minutes, 0)} min more, ${m.soak.requests} requests, ${m.soak.failures} failures), RSS MB by second: ` +
        m.soak.samples.map((sample) => `${sample.seconds} s ${fmt(sample.rss / MB, 1)}`).join(' · ') + '.')
    }
  }
  if (scenario.websocket !== undefined) {
    const w = scenario.websocket
    lines.push(`${w.echoConnections} connections, each echoing one ${w.messageBytes}-byte message at a time.`, '', '| variant | messages/s | ratio to lane-direct |', '|---|---|---|')
    for (const v of w.variants) lines.push(`| ${v.name} | ${range(v.messagesPerSecond, 0)} | ${range(v.ratio)} |`)
    lines.push('', `Gateway RSS: ${fmt(w.rssIdleGateway / MB, 1)} MB idle → ${fmt(w.rssWithIdleConnections / MB, 1)} MB with ${w.idleConnections} idle WebSockets open (+${fmt((w.rssWithIdleConnections - w.rssIdleGateway) / MB, 1)} MB).`)
  }
  if (scenario.configPush !== undefined) {
    const c = scenario.configPush
    lines.push(`${c.pushes} pushes, each alternating a scope on a route; push to applied (the version's time in the store to the instance's report):`, '', '| instance | p50 ms | max ms |', '|---|---|---|')
    for (const i of c.instances) lines.push(`| ${i.instance} | ${i.p50Ms} | ${i.maxMs} |`)
    lines.push(`| all | ${c.overall.p50Ms} | ${c.overall.maxMs} |`)
  }
  if (scenario.split !== undefined) {
    lines.push('', `Proxied requests per target (two equal weights): ${scenario.split.map((t) => `${t.target} ${t.requests}`).join(', ')}.`)
  }
  if (scenario.mirror !== undefined) {
    const m = scenario.mirror
    const offered = m.sent + m.droppedInFlight + m.droppedBodyTooLarge
    lines.push('', `Mirror (${m.percent} %, at most ${m.maxInFlight} in flight, each copy answered ${m.delayMs} ms late), warm-ups included: ${m.requests} requests of the mirrored route, ${offered} copies offered (${fmt(offered / m.requests * 100, 2)} %): ${m.sent} sent, ${m.droppedInFlight} dropped in flight, ${m.droppedBodyTooLarge} dropped for size; the slow lane received ${m.received}.`)
  }
  if (scenario.failover !== undefined) {
    const { during, after } = scenario.failover
    lines.push('', `lane-b killed mid-run: statuses ${JSON.stringify(during.statusCounts)}, ${during.errors} errors; the run after: ${JSON.stringify(after.statusCounts)}, ${after.errors} errors.`)
  }
  if (scenario.console !== undefined) {
    const c = scenario.console
    lines.push('', 'Console open vs closed (the gateway process alone; the poller runs apart, on the load generator\'s core):', '', '| closed | open | rounds | closed CPU µs/req | open CPU µs/req | open ÷ closed |', '|---|---|---|---|---|---|')
    for (const p of c.pairs) lines.push(`| ${p.closed} | ${p.open} | ${p.rounds} | ${range(p.closedCpuUsPerRequest, 1)} | ${range(p.openCpuUsPerRequest, 1)} | ${range(p.cpuRatio)} |`)
    if (c.idle !== undefined) {
      lines.push('', `Idle, no traffic (${c.idle.windows} windows of ${fmt(c.idle.seconds, 1)} s), CPU µs per second: gateway with the console open ${range(c.idle.openCpuUsPerSecond, 0)}, closed ${range(c.idle.closedCpuUsPerSecond, 0)}; the poller's own ${range(c.idle.pollerCpuUsPerSecond, 0)}.`)
    }
    lines.push('', `Console poll rounds: ${c.polls.ok} answered, ${c.polls.failed} failed.`)
  }
  if (scenario.instructions !== undefined) lines.push(...instructionTable(scenario.instructions))
  if (scenario.telemetry !== undefined) {
    const t = scenario.telemetry
    lines.push('', `Telemetry output (warm-up and token requests put out more than the requests measured): the OTLP sink received ${t.tracedSpans} spans in ${t.tracedExports} exports for ${t.tracedRequests} requests measured at sampling 1 (× ${t.spansPerRequest} span${t.spansPerRequest === 1 ? '' : 's'} each), ${t.untracedSpans} at sampling 0; the access log file holds ${t.accessLines} lines for ${t.accessRequests} requests measured.`)
  }
  for (const s of scenario.skipped) lines.push('', `Skipped ${s.variant}: ${s.reason}`)
  lines.push('')
  return lines
}

/**
 * The latency scenario's GC section: each variant's server (and the lane behind it), pauses per round, and how the
 * samples above p99 of all rounds met them, beside what chance alone would give.
 */
function gcTable (gc: readonly VariantGc[]): string[] {
  const lines = ['', 'GC pauses seen in each server process during its runs (per round: median (min–max); the samples above p99 summed over rounds; "by chance": how many would meet a pause if they fell anywhere in the run):', '',
    '| variant | server | GC pauses | GC ms | longest pause ms | young generation MB | lane GC pauses / ms / longest | samples above p99 | met a server GC pause | by chance | met a lane GC pause |', '|---|---|---|---|---|---|---|---|---|---|---|']
  for (const v of gc) {
    const lane = v.upstream === undefined ? '–' : `${range(v.upstream.count, 0)} / ${range(v.upstream.totalMs)} / ${range(v.upstream.longestMs)}`
    const own = v.node
      ? `${range(v.count, 0)} | ${range(v.totalMs)} | ${range(v.longestMs)} | ${v.youngGenerationMB === undefined ? '–' : range(v.youngGenerationMB)}`
      : 'not Node: no GC to report | – | – | –'
    lines.push(`| ${v.variant} | ${v.server} | ${own} | ${lane} | ${v.tail.samples} | ${v.node ? v.tail.duringServerGc : '–'} | ${v.node ? fmt(v.tail.serverByChance, 1) : '–'} | ${v.tail.duringUpstreamGc ?? '–'} |`)
  }
  const spreadRows = gc.flatMap(({ variant, pauseAgainstSpread: p }) => p === undefined ? [] :
    [`| ${variant} | ${range(p.pausesPer100Requests, 2)} | ${range(p.meanPauseMs)} | ${range(p.p99MinusP50Ms)} |`])
  if (spreadRows.length > 0) {
    lines.push('', 'Where p99 sits: per round, the server\'s GC pauses per 100 requests, its mean pause, and its own p99 minus its own p50 (a request that meets a pause waits for it, so once pauses fall on about 1 % of requests p99 − p50 comes out near one mean pause):', '',
      '| variant | GC pauses per 100 requests | mean pause ms | p99 − p50 ms |', '|---|---|---|---|', ...spreadRows)
  }
  const incomplete = gc.filter((v) => v.incompleteRounds > 0)
  if (incomplete.length > 0) lines.push('', `A GC ring overran in some rounds (figures a floor): ${incomplete.map((v) => `${v.variant} ${v.incompleteRounds}`).join(', ')}.`)
  const gateway = gc.find((v) => v.variant === 'lanegate-live')
  if (gateway?.node === true) {
    const t = gateway.tail
    const kinds = Object.entries(t.serverGcKinds ?? {}).sort((a, b) => b[1] - a[1]).map(([kind, n]) => `${kind} ${n}`).join(', ')
    lines.push('', `Of the ${t.samples} samples above p99 of lanegate-live (all rounds), ${t.duringServerGc} started, ended or ran through a gateway GC pause ` +
      `(${fmt(t.serverByChance, 1)} would by chance${kinds === '' ? '' : `; by the pause's kind: ${kinds}`})${t.duringUpstreamGc === undefined ? '' : `; ${t.duringUpstreamGc} met a GC pause of the lane`}.`)
  }
  const outsideRows = gc.flatMap(({ variant, tail: { outsideServerGc: o } }) => o === undefined ? [] :
    [`| ${variant} | ${o.outside} | ${o.afterPause} | ${fmt(o.afterPauseByChance, 1)} | ${o.inEpisode} | ${fmt(o.inEpisodeByChance, 1)} |`])
  if (outsideRows.length > 0) {
    lines.push('', `The samples above p99 that met no GC pause of their server (all rounds): how many started within ${FOLLOW_MS} ms after a pause ended, and how many within ${FOLLOW_MS} ms of another of them (an episode), each beside what chance would give:`, '',
      '| variant | met no GC pause | after a pause | by chance | in an episode | by chance |', '|---|---|---|---|---|---|', ...outsideRows)
  }
  return lines
}

/** Thousands of instructions, e.g. 57.1k. */
function kilo (n: number | undefined): string {
  return n === undefined ? '–' : `${(n / 1000).toFixed(1)}k`
}

/** `--instructions`: instructions per request by variant, each batch's, and the comparisons the scenario is read for. */
function instructionTable (m: InstructionMeasurement): string[] {
  const lines = [
    `Instructions per request (callgrind \`Ir\`, user space only: no kernel, no syscalls), after ${m.warmupRequests} warm-up requests per variant; two batches of ${m.batchRequests} sequential requests on one keep-alive connection.`,
    '',
    '| variant | role | instructions/request | batch 1 | batch 2 | batch 2 ÷ 1 | ratio to baseline (baseline ÷ variant) | upstream instructions/request | idle instructions/s | net of idle, per request |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ]
  for (const v of m.variants) {
    const [first, second] = v.batches.map((b) => b.instructions / b.requests)
    lines.push(`| ${v.name} | ${v.role} | ${kilo(v.perRequest)} | ${kilo(first)} | ${kilo(second)} | ${fmt(1 + v.batchDrift, 4)} | ${v.role === 'baseline' ? '1' : fmt(v.ratio)} | ${kilo(v.upstreamPerRequest)} | ${kilo(v.idlePerSecond)} | ${kilo(v.netPerRequest)} |`)
  }
  if (m.comparisons.length > 0) {
    lines.push('', 'By instructions (reference ÷ subject: the throughput ratio a CPU-bound server would see; "net of idle": each side less its clock-driven work over the batches\' wall time, which callgrind\'s slowness inflates):', '', '| comparison | subject | reference | ratio | net of idle |', '|---|---|---|---|---|')
    for (const c of m.comparisons) lines.push(`| ${c.what} | ${c.subject} | ${c.reference} | ${fmt(c.ratio)} | ${c.netRatio === undefined ? '–' : fmt(c.netRatio)} |`)
  }
  return lines
}

/** The markdown report of a run: machine, one table per scenario, targets, failures and warnings. */
export function markdownReport (result: BenchResult): string {
  const m = result.machine
  const lines = [
    `# lanegate bench — ${result.startedAt}`,
    '',
    `${m.cpus} × ${m.cpuModel}, Node ${m.node}, ${m.pinned ? `servers pinned to core ${m.serverCore}, load generator to core ${m.loadgenCore}` : 'NOT pinned'}. ` +
      `Options: ${Object.entries(result.options).map(([k, v]) => `${k}=${Array.isArray(v) ? v.join(',') : String(v)}`).join(', ')}.`,
    '',
    'Spreads are median (min–max) over rounds; ratios and added latencies are taken against the baseline of the same round. ⚠ = load generator near saturation.',
    '',
    `Deciding metric, named before the run: ${result.decidingMetric ?? DECIDING_METRIC}. Req/s, latency and heap bytes per request are reported beside it.`,
    '',
  ]
  for (const scenario of result.scenarios) lines.push(...scenarioTable(scenario))
  if (result.targets.length > 0) {
    lines.push('### Targets', '', 'Met: yes or no; "– (yes)" or "– (no)": reported beside the targets, not held.', '', '| scenario | what | goal | measured | met |', '|---|---|---|---|---|')
    for (const t of result.targets) lines.push(`| ${t.scenario} | ${t.what} | ${t.goal} | ${t.measured} | ${t.reportOnly === true ? `– (${t.met ? 'yes' : 'no'})` : t.met ? 'yes' : 'no'} |`)
    lines.push('')
  }
  if (result.failures.length > 0) lines.push('### FAILURES', '', ...result.failures.map((f) => `- ${f}`), '')
  if (result.warnings.length > 0) lines.push('### Warnings', '', ...result.warnings.map((w) => `- ${w}`), '')
  return lines.join('\n')
}

/** The file-name stamp of a run: 2026-11-22T05-40-12Z. */
export function runStamp (date: Date): string {
  return date.toISOString().replace(/\.\d+Z$/, 'Z').replaceAll(':', '-')
}
