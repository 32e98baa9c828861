import type { InstructionBatch, InstructionComparison, InstructionVariant, VariantRole } from './result-types.js'

/**
 * The arithmetic of `--instructions`: per-request counts from batches, ratios between variants, and the
 * comparisons issue 24 reads the scenarios for. Pure, so a unit test can pin every figure.
 */

/** Instructions per request of some batches taken together (total instructions ÷ total requests). */
export function instructionsPerRequest (batches: readonly InstructionBatch[], which: 'server' | 'upstream' = 'server'): number {
  const requests = batches.reduce((sum, b) => sum + b.requests, 0)
  if (requests === 0) throw new Error('no requests were counted')
  const instructions = batches.reduce((sum, b) => sum + (which === 'server' ? b.instructions : b.upstreamInstructions ?? 0), 0)
  return instructions / requests
}

/**
 * The ratio of a subject to a reference by instructions, as a throughput ratio: `reference ÷ subject`. A server
 * bound by its CPU, doing these instructions per request at the same speed, would serve this share of the
 * reference's requests per second (kernel time aside).
 */
export function instructionRatio (referencePerRequest: number, subjectPerRequest: number): number {
  if (!(subjectPerRequest > 0) || !(referencePerRequest > 0)) throw new Error(`instruction counts must be positive (reference ${referencePerRequest}, subject ${subjectPerRequest})`)
  return referencePerRequest / subjectPerRequest
}

/** How far the last batch's per-request count is from the first's (0.01 = 1 % more): 0 when the path is flat. */
export function batchDrift (batches: readonly InstructionBatch[]): number {
  const first = batches[0]
  const last = batches[batches.length - 1]
  if (first === undefined || last === undefined || first === last) return 0
  return instructionsPerRequest([last]) / instructionsPerRequest([first]) - 1
}

/**
 * Per-request instructions less what the server does with no traffic over the same wall time (`idlePerSecond` ×
 * the batches' seconds ÷ their requests); undefined without the idle rate or the batches' times. A floor: while
 * it serves, a timer firing inside a busy loop turn costs less than one that wakes an idle loop.
 */
export function netOfIdle (batches: readonly InstructionBatch[], idlePerSecond: number | undefined): number | undefined {
  if (idlePerSecond === undefined || batches.some((b) => b.seconds === undefined)) return undefined
  const seconds = batches.reduce((sum, b) => sum + (b.seconds ?? 0), 0)
  const requests = batches.reduce((sum, b) => sum + b.requests, 0)
  return instructionsPerRequest(batches) - idlePerSecond * seconds / requests
}

/** A variant's figures from its batches; `baselinePerRequest` (when the scenario has a baseline) gives its ratio. */
export function instructionVariant (name: string, role: VariantRole, batches: InstructionBatch[], baselinePerRequest?: number, idlePerSecond?: number): InstructionVariant {
  const perRequest = instructionsPerRequest(batches)
  const net = netOfIdle(batches, idlePerSecond)
  const upstream = batches.every((b) => b.upstreamInstructions !== undefined) ? instructionsPerRequest(batches, 'upstream') : undefined
  return {
    name,
    role,
    batches,
    perRequest,
    batchDrift: batchDrift(batches),
    ...(upstream === undefined ? {} : { upstreamPerRequest: upstream }),
    ...(baselinePerRequest === undefined ? {} : { ratio: instructionRatio(baselinePerRequest, perRequest) }),
    ...(idlePerSecond === undefined ? {} : { idlePerSecond }),
    ...(net === undefined ? {} : { netPerRequest: net }),
  }
}

/**
 * The pairs the scenarios are read for besides "÷ baseline" (issue 24): `subject` against `reference`, when both
 * ran. The ratio is reference ÷ subject by instructions per request.
 */
export const INSTRUCTION_COMPARISONS: ReadonlyArray<{ scenario: string, what: string, subject: string, reference: string }> = [
  { scenario: 'auth-get', what: 'auth-get ÷ bare fastify sending the same answer (issue 24: ≥ 0.85×)', subject: 'lanegate-auth-get', reference: 'fastify-same-response' },
  { scenario: 'auth-get', what: 'auth-get ÷ the same with a logger and request ids (lanegate\'s own work)', subject: 'lanegate-auth-get', reference: 'fastify-same-response-as-gateway' },
  { scenario: 'auth-get', what: 'bare fastify with a logger and request ids ÷ without, same answer (what fastify charges for them)', subject: 'fastify-same-response-as-gateway', reference: 'fastify-same-response' },
  { scenario: 'auth-get', what: 'auth-get with metrics on ÷ off', subject: 'lanegate-auth-get', reference: 'lanegate-auth-get-metrics-off' },
  { scenario: 'auth-get', what: 'api-key GET ÷ auth-get', subject: 'lanegate-api-key-get', reference: 'lanegate-auth-get' },
  { scenario: 'proxy-service', what: 'proxy service with circuit breakers and a split over two groups ÷ plain (issue 41: ≤ 3 % more, i.e. ≥ 0.971×)', subject: 'lanegate-proxy-breaker-split', reference: 'lanegate-proxy-service' },
  { scenario: 'proxy-service', what: 'a second process of the plain proxy service ÷ the first (the control)', subject: 'lanegate-proxy-service-twin', reference: 'lanegate-proxy-service' },
  { scenario: 'proxy-mirror', what: 'the GET on the route mirroring 10 % to a lane answering 2 s late ÷ the same GET unmirrored, same gateway (what the mirror costs the caller\'s process)', subject: 'lanegate-proxy-mirrored', reference: 'lanegate-proxy-unmirrored' },
  { scenario: 'live-proxy', what: 'live proxy with metrics on ÷ off (issue 14: metrics ≤ 5 %, i.e. ≥ 0.952×)', subject: 'lanegate-live', reference: 'lanegate-live-metrics-off' },
  { scenario: 'live-proxy', what: 'live proxy ÷ nginx (user-space instructions only: nginx\'s cost is mostly the kernel\'s)', subject: 'lanegate-live', reference: 'nginx' },
]

/** `subject` against `reference` by instructions, and net of each side's idle clock work when both have it. */
function comparison (what: string, subject: InstructionVariant, reference: InstructionVariant): InstructionComparison {
  const net = subject.netPerRequest !== undefined && reference.netPerRequest !== undefined && subject.netPerRequest > 0 && reference.netPerRequest > 0
    ? { netRatio: instructionRatio(reference.netPerRequest, subject.netPerRequest) }
    : {}
  return { what, reference: reference.name, subject: subject.name, ratio: instructionRatio(reference.perRequest, subject.perRequest), ...net }
}

/** The comparisons of `scenario` whose two variants were both counted. */
export function instructionComparisons (scenario: string, variants: readonly InstructionVariant[]): InstructionComparison[] {
  const byName = new Map(variants.map((v) => [v.name, v]))
  const found: InstructionComparison[] = []
  for (const c of INSTRUCTION_COMPARISONS) {
    const subject = byName.get(c.subject)
    const reference = byName.get(c.reference)
    if (c.scenario === scenario && subject !== undefined && reference !== undefined) found.push(comparison(c.what, subject, reference))
  }
  // `--compare DIR`: the other checkout's gateway against this one's, for each subject it was run beside.
  for (const v of variants) {
    if (!v.name.endsWith('@compare')) continue
    const ours = byName.get(v.name.slice(0, -'@compare'.length))
    if (ours !== undefined) found.push(comparison(`${ours.name}: this checkout ÷ the --compare checkout`, ours, v))
  }
  return found
}
