import type { LoadResult } from './load-job.js'
import type { ScenarioResult } from './result-types.js'
import { spread, type Spread } from './stats.js'

/**
 * Figures taken round by round: a ratio of two variants means most when both ran in the same round, on the machine
 * as it was then. The targets (targets.ts, telemetry-targets.ts) pair their variants this way.
 */

/** Server CPU per request of one measurement (µs). */
export function cpuPerRequest (result: LoadResult): number {
  return result.requests === 0 ? Number.NaN : result.serverCpuMicros / result.requests
}

/**
 * `measure(subject, peer)` in every round where both variants of scenario `id` ran, spread over those rounds;
 * undefined when no round had both (the peer was skipped, or the scenario did not run).
 */
export function perRound (scenarios: readonly ScenarioResult[], id: string, subject: string, peer: string,
  measure: (subject: LoadResult, peer: LoadResult) => number): Spread | undefined {
  return perRoundOf(scenarios, id, [subject, peer], ([a, b]) => measure(a, b))
}

/** `measure` of the named variants' results in every round where all of them ran, spread over those rounds. */
export function perRoundOf (scenarios: readonly ScenarioResult[], id: string, names: readonly string[],
  measure: (results: LoadResult[]) => number): Spread | undefined {
  const runs = scenarios.find((s) => s.id === id)?.runs ?? []
  const values: number[] = []
  for (const round of new Set(runs.map((r) => r.round))) {
    const results = names.map((name) => runs.find((r) => r.round === round && r.variant === name)?.result)
    if (results.every((r): r is LoadResult => r !== undefined)) values.push(measure(results))
  }
  return values.length === 0 ? undefined : spread(values)
}
