import type { GcWindowPauses } from './gc-ring.js'
import type { LoadResult } from './load-job.js'
import { countOverlapping, outsideGc, overlappingByChance, overlappingByKind, summarizePauses, type GcWindowSummary, type OutsideGc, type TimedSample } from './gc-tail.js'
import type { PauseAgainstSpread, RunGc, TailInGc, VariantGc } from './result-types.js'
import { round, spread, type Spread } from './stats.js'

/**
 * The latency scenario's GC report: per run, what the servers' GC preloads saw during the run and how the run's
 * samples above p99 met it; per variant, the same over rounds. Pure (the pauses are asked for in run-scenario.ts).
 */

/** The pauses a run's servers reported: `null` for a server without the preload (not Node: nginx). */
export interface RunPauses {
  server: GcWindowPauses | null
  /** The upstream the variant relays to, when it has one. */
  upstream?: GcWindowPauses | null
}

/** What the GC of one run's servers did, and how many of `tail` (the samples above p99) overlapped it. */
export function runGc (pauses: RunPauses, tail: readonly TimedSample[], window: { fromMs: number, toMs: number }): RunGc {
  const server = pauses.server
  const upstream = pauses.upstream
  const inTail: TailInGc = {
    samples: tail.length,
    duringServerGc: server === null ? 0 : countOverlapping(tail, server.pauses),
    ...(server === null ? {} : { serverGcKinds: overlappingByKind(tail, server.pauses) }),
    serverByChance: server === null ? 0 : round(overlappingByChance(tail, server.pauses, window.fromMs, window.toMs), 2),
    ...(upstream === undefined || upstream === null ? {} : { duringUpstreamGc: countOverlapping(tail, upstream.pauses) }),
    ...(server === null ? {} : { outsideServerGc: roundedChances(outsideGc(tail, server.pauses, window.fromMs, window.toMs)) }),
  }
  const young = server?.youngGenerationBytes === undefined ? {} : { youngGenerationBytes: server.youngGenerationBytes }
  return {
    server: server === null ? null : { ...rounded(summarizePauses(server.pauses, server.complete)), ...young },
    ...(upstream === undefined ? {} : { upstream: upstream === null ? null : rounded(summarizePauses(upstream.pauses, upstream.complete)) }),
    tail: inTail,
  }
}

function roundedChances (o: OutsideGc): OutsideGc {
  return { ...o, afterPauseByChance: round(o.afterPauseByChance, 2), inEpisodeByChance: round(o.inEpisodeByChance, 2) }
}

function rounded<T extends { totalMs: number, longestMs: number }> (s: T): T {
  return { ...s, totalMs: round(s.totalMs), longestMs: round(s.longestMs) }
}

function gcSpreads (windows: ReadonlyArray<{ count: number, totalMs: number, longestMs: number }>): { count: Spread, totalMs: Spread, longestMs: Spread } {
  return {
    count: spread(windows.map((w) => w.count)),
    totalMs: spread(windows.map((w) => round(w.totalMs))),
    longestMs: spread(windows.map((w) => round(w.longestMs))),
  }
}

/**
 * Per variant, over the rounds: its server's pauses per round (count, total, longest as spreads), its upstream's
 * likewise, and the tail counts summed over rounds. Variants without a measured run are left out.
 */
export function summarizeGc (
  variants: ReadonlyArray<{ name: string, server: string, upstream?: string }>,
  runs: ReadonlyArray<{ variant: string, gc?: RunGc, result?: RoundLatency }>,
): VariantGc[] {
  const summaries: VariantGc[] = []
  for (const variant of variants) {
    const myRuns = runs.filter((r) => r.variant === variant.name)
    const mine = myRuns.map((r) => r.gc).filter((gc): gc is RunGc => gc !== undefined)
    if (mine.length === 0) continue
    const servers = mine.map((gc) => gc.server).filter((s): s is GcWindowSummary => s !== null)
    const upstreams = mine.map((gc) => gc.upstream).filter((s): s is GcWindowSummary => s !== null && s !== undefined)
    const tail: TailInGc = {
      samples: sum(mine.map((gc) => gc.tail.samples)),
      duringServerGc: sum(mine.map((gc) => gc.tail.duringServerGc)),
      ...(servers.length === 0 ? {} : { serverGcKinds: sumKinds(mine.map((gc) => gc.tail.serverGcKinds ?? {})) }),
      serverByChance: round(sum(mine.map((gc) => gc.tail.serverByChance)), 1),
      ...(upstreams.length === 0 ? {} : { duringUpstreamGc: sum(mine.map((gc) => gc.tail.duringUpstreamGc ?? 0)) }),
      ...sumOutside(mine.map((gc) => gc.tail.outsideServerGc)),
    }
    summaries.push({
      variant: variant.name,
      server: variant.server,
      node: servers.length > 0,
      ...(servers.length === 0 ? {} : gcSpreads(servers)),
      ...youngGeneration(servers),
      ...(variant.upstream === undefined || upstreams.length === 0 ? {} : { upstream: { name: variant.upstream, ...gcSpreads(upstreams) } }),
      ...pauseAgainstSpread(myRuns),
      tail,
      incompleteRounds: mine.filter((gc) => gc.server?.complete === false || gc.upstream?.complete === false).length,
    })
  }
  return summaries
}

/** The part of a round's load result (load-job.ts LoadResult) that `pauseAgainstSpread` reads. */
export type RoundLatency = Pick<LoadResult, 'requests'> & { latencyMs: Pick<LoadResult['latencyMs'], 'p50' | 'p99'> }

/**
 * Per round of a Node server that paused at least once: pauses per 100 requests, the mean pause and p99 − p50, as
 * spreads over those rounds (only when every such round has its load result). At c=1 a pause holds the one request in
 * flight, so where pauses fall on about 1 % of requests or more, p99 lands on the requests that met one and p99 − p50
 * comes out near one mean pause: a server's p99 is then set by how long its scavenges take, not by its own code's
 * slowest requests.
 */
function pauseAgainstSpread (runs: ReadonlyArray<{ gc?: RunGc, result?: RoundLatency }>): { pauseAgainstSpread?: PauseAgainstSpread } {
  const rounds: Array<{ pauses: GcWindowSummary, result: RoundLatency }> = []
  for (const { gc, result } of runs) {
    const pauses = gc?.server
    if (pauses === null || pauses === undefined || pauses.count === 0) continue
    if (result === undefined || result.requests === 0) return {}
    rounds.push({ pauses, result })
  }
  if (rounds.length === 0) return {}
  return {
    pauseAgainstSpread: {
      pausesPer100Requests: spread(rounds.map(({ pauses, result }) => round(pauses.count / result.requests * 100, 2))),
      meanPauseMs: spread(rounds.map(({ pauses }) => round(pauses.totalMs / pauses.count))),
      p99MinusP50Ms: spread(rounds.map(({ result }) => round(result.latencyMs.p99 - result.latencyMs.p50))),
    },
  }
}

/** The young generation's size over the rounds, MB (only when every round reported it). */
function youngGeneration (servers: readonly GcWindowSummary[]): { youngGenerationMB?: Spread } {
  const sizes = servers.map((s) => s.youngGenerationBytes)
  if (sizes.length === 0 || sizes.some((b) => b === undefined)) return {}
  return { youngGenerationMB: spread((sizes as number[]).map((b) => round(b / (1024 * 1024), 1))) }
}

/** The rounds' outsideServerGc added up (only when every round has it), the chance figures rounded. */
function sumOutside (rounds: ReadonlyArray<OutsideGc | undefined>): { outsideServerGc?: OutsideGc } {
  const all = rounds.filter((o): o is OutsideGc => o !== undefined)
  if (all.length === 0 || all.length < rounds.length) return {}
  const total = (pick: (o: OutsideGc) => number): number => sum(all.map(pick))
  return {
    outsideServerGc: {
      outside: total((o) => o.outside),
      afterPause: total((o) => o.afterPause),
      afterPauseByChance: round(total((o) => o.afterPauseByChance), 1),
      inEpisode: total((o) => o.inEpisode),
      inEpisodeByChance: round(total((o) => o.inEpisodeByChance), 1),
    },
  }
}

function sumKinds (counts: ReadonlyArray<Readonly<Record<string, number>>>): Record<string, number> {
  const total: Record<string, number> = {}
  for (const byKind of counts) for (const [kind, n] of Object.entries(byKind)) total[kind] = (total[kind] ?? 0) + n
  return total
}

function sum (values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0)
}
