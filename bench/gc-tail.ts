import type { GcPause } from './gc-ring.js'

/**
 * Setting a latency round's slowest samples beside the GC pauses its servers saw (issue 24 item 5: name the source
 * of the gateway's own tail). Pure functions on times of the run's monotonic clock (bench/mono-clock.ts).
 */

/** A sample as the load generator saw it: the request's start and the response's end. */
export interface TimedSample {
  startMs: number
  endMs: number
}

/** What one server's GC did during one run. */
export interface GcWindowSummary {
  count: number
  totalMs: number
  longestMs: number
  /** False when the preload's ring had overwritten pauses of the window (the figures are then a floor). */
  complete: boolean
  /** V8's young generation's capacity at the end of the window (bench/gc-ring.ts), when the preload reported it. */
  youngGenerationBytes?: number
}

/** Count, total and longest of `pauses`. */
export function summarizePauses (pauses: readonly GcPause[], complete = true): GcWindowSummary {
  let totalMs = 0
  let longestMs = 0
  for (const p of pauses) {
    totalMs += p.durationMs
    longestMs = Math.max(longestMs, p.durationMs)
  }
  return { count: pauses.length, totalMs, longestMs, complete }
}

/** Whether `sample` and `pause` share any instant: it started, ended or ran through the pause. */
export function overlaps (sample: TimedSample, pause: GcPause): boolean {
  return sample.startMs < pause.startMs + pause.durationMs && pause.startMs < sample.endMs
}

/** How many of `samples` overlap at least one of `pauses`. */
export function countOverlapping (samples: readonly TimedSample[], pauses: readonly GcPause[]): number {
  let count = 0
  for (const sample of samples) if (pauses.some((pause) => overlaps(sample, pause))) count++
  return count
}

/** perf_hooks' GC kinds (`constants.NODE_PERFORMANCE_GC_*`) by name. */
export const GC_KINDS: Readonly<Record<number, string>> = { 1: 'minor', 4: 'major', 8: 'incremental', 16: 'weak callbacks' }

/**
 * Of `samples`, how many met a pause of each kind (GC_KINDS; an unknown kind by its number), a sample that met
 * several counted once, under the longest of them: whether the tail is the young generation's scavenges (its size)
 * or the old generation's mark-compacts.
 */
export function overlappingByKind (samples: readonly TimedSample[], pauses: readonly GcPause[]): Record<string, number> {
  const byKind: Record<string, number> = {}
  for (const sample of samples) {
    let longest: GcPause | undefined
    for (const pause of pauses) {
      if (overlaps(sample, pause) && (longest === undefined || pause.durationMs > longest.durationMs)) longest = pause
    }
    if (longest === undefined) continue
    const name = GC_KINDS[longest.kind] ?? String(longest.kind)
    byKind[name] = (byKind[name] ?? 0) + 1
  }
  return byKind
}

/**
 * How many of `samples` would overlap a pause by chance: for each, the probability that a sample of its length,
 * placed anywhere in the window [fromMs, toMs], meets one of `pauses` (the length of the union of the intervals
 * [pause start − sample length, pause end], clipped to the window, over the window's length), summed. A count of
 * overlapping tail samples well above this says the pauses made the tail; one near it says they merely coincide.
 */
export function overlappingByChance (samples: readonly TimedSample[], pauses: readonly GcPause[], fromMs: number, toMs: number): number {
  const windowMs = toMs - fromMs
  if (windowMs <= 0 || pauses.length === 0) return 0
  const sorted = [...pauses].sort((a, b) => a.startMs - b.startMs)
  let expected = 0
  for (const sample of samples) {
    const length = sample.endMs - sample.startMs
    let covered = 0
    let reach = fromMs
    for (const pause of sorted) {
      const from = Math.max(reach, pause.startMs - length, fromMs)
      const to = Math.min(pause.startMs + pause.durationMs, toMs)
      if (to > from) covered += to - from
      reach = Math.max(reach, to)
    }
    expected += covered / windowMs
  }
  return expected
}

/**
 * How close a slow sample must start to the end of a GC pause, or to another slow sample, to count as following it:
 * a few requests' time at one connection.
 */
export const FOLLOW_MS = 5

/** Where the tail samples that met no GC pause fell (issue 24 item 5: the part of the tail that is not GC). */
export interface OutsideGc {
  /** Of the tail, the samples that met no pause of the server. */
  outside: number
  /** Of those, the ones that started or ran within FOLLOW_MS after a pause ended (the GC's after-work on the core). */
  afterPause: number
  afterPauseByChance: number
  /** Of those, the ones with another of those starting within FOLLOW_MS: an episode longer than one request. */
  inEpisode: number
  inEpisodeByChance: number
}

/**
 * The tail samples that met no pause of `pauses`: how many followed a pause closely, and how many came in episodes
 * with one another, each beside what chance would give if they fell anywhere in [fromMs, toMs]. Many after
 * pauses says the GC's work outlasts its pause (sweeping on the same core); many in episodes says something slowed
 * the process for longer than a request (the machine, a periodic task); neither says the work of single requests.
 */
export function outsideGc (samples: readonly TimedSample[], pauses: readonly GcPause[], fromMs: number, toMs: number): OutsideGc {
  const outside = samples.filter((sample) => !pauses.some((pause) => overlaps(sample, pause)))
  const afterPauses: GcPause[] = pauses.map((pause) => ({ ...pause, startMs: pause.startMs + pause.durationMs, durationMs: FOLLOW_MS }))
  const inEpisode = outside.filter((sample) => outside.some((other) => other !== sample && Math.abs(other.startMs - sample.startMs) <= FOLLOW_MS)).length
  const windowMs = toMs - fromMs
  const near = windowMs <= 0 ? 0 : Math.min(1, (2 * FOLLOW_MS) / windowMs)
  return {
    outside: outside.length,
    afterPause: countOverlapping(outside, afterPauses),
    afterPauseByChance: overlappingByChance(outside, afterPauses, fromMs, toMs),
    inEpisode,
    inEpisodeByChance: outside.length * (1 - (1 - near) ** Math.max(0, outside.length - 1)),
  }
}
