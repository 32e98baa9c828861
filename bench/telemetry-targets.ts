import type { InstructionVariant, ScenarioResult, TargetCheck } from './result-types.js'
import { cpuPerRequest, perRound } from './round-pairs.js'
import { round, type Spread } from './stats.js'
import { TELEMETRY_GOALS, TELEMETRY_TWIN_SUFFIX } from './telemetry-variants.js'

/**
 * Issue 42's goals (`--telemetry`): what span export (every trace sampled, none sampled) and the access log to a
 * file cost a request, as the variant's server CPU per request ÷ its subject's, paired within each round, median
 * over rounds; with `--instructions`, the same ÷ by instructions per request. Beside each, the twin's: a second
 * process of the subject's config, how far two processes of one config differ in the same rounds.
 */

/** The subjects the telemetry variants are run beside, by scenario. */
export const TELEMETRY_SUBJECTS: ReadonlyArray<{ scenario: string, subject: string }> = [
  { scenario: 'auth-get', subject: 'lanegate-auth-get' },
  { scenario: 'live-proxy', subject: 'lanegate-live' },
]

function text (s: Spread): string {
  return `${round(s.median)}× (${round(s.min)}–${round(s.max)})`
}

/** The checks of one scenario's timed rounds; none when its telemetry variants did not run. */
function timedChecks (scenarios: readonly ScenarioResult[], scenario: string, subject: string): TargetCheck[] {
  const over = (variant: string): Spread | undefined =>
    perRound(scenarios, scenario, variant, subject, (a, b) => cpuPerRequest(a) / cpuPerRequest(b))
  const twin = over(subject + TELEMETRY_TWIN_SUFFIX)
  const control = twin === undefined ? '' : `; a second plain process: ${text(twin)}`
  return TELEMETRY_GOALS.flatMap(({ suffix, what, most }) => {
    const ratio = over(subject + suffix)
    if (ratio === undefined) return []
    return [{
      scenario,
      what: `${what}: server CPU per request ÷ the plain gateway's, same rounds`,
      goal: `≤ ${most}×`,
      measured: text(ratio) + control,
      met: ratio.median <= most,
    }]
  })
}

/** The checks of one scenario counted in instructions; none when its telemetry variants were not counted. */
function instructionChecks (scenario: string, subject: string, variants: readonly InstructionVariant[]): TargetCheck[] {
  const byName = new Map(variants.map((v) => [v.name, v]))
  const plain = byName.get(subject)
  if (plain === undefined) return []
  const ratio = (v: InstructionVariant): number => v.perRequest / plain.perRequest
  const net = (v: InstructionVariant): string =>
    v.netPerRequest === undefined || plain.netPerRequest === undefined ? '' : `, net of idle ${round(v.netPerRequest / plain.netPerRequest)}×`
  const twin = byName.get(subject + TELEMETRY_TWIN_SUFFIX)
  const control = twin === undefined ? '' : `; a second plain process: ${round(ratio(twin))}×${net(twin)}`
  return TELEMETRY_GOALS.flatMap(({ suffix, what, most }) => {
    const counted = byName.get(subject + suffix)
    if (counted === undefined) return []
    return [{
      scenario,
      what: `${what}: instructions per request ÷ the plain gateway's`,
      goal: `≤ ${most}×`,
      measured: `${round(ratio(counted))}× (${Math.round(counted.perRequest)} vs ${Math.round(plain.perRequest)})${net(counted)}${control}`,
      met: ratio(counted) <= most,
    }]
  })
}

/** Issue 42's checks, for every scenario that ran its telemetry variants. */
export function telemetryChecks (scenarios: readonly ScenarioResult[], checks: TargetCheck[]): void {
  for (const { scenario, subject } of TELEMETRY_SUBJECTS) {
    const counted = scenarios.find((s) => s.id === scenario)?.instructions
    checks.push(...(counted === undefined ? timedChecks(scenarios, scenario, subject) : instructionChecks(scenario, subject, counted.variants)))
  }
}
