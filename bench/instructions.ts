import { setTimeout as sleep } from 'node:timers/promises'
import { Client } from 'undici'
import type { BenchOptions } from './options.js'
import { callgrindControl, dumpInstructions } from './callgrind.js'
import { instructionComparisons, instructionsPerRequest, instructionVariant } from './instruction-figures.js'
import type { InstructionBatch, InstructionVariant, ScenarioResult } from './result-types.js'
import type { RunLog } from './run-scenario.js'
import type { PreparedVariant, ScenarioPlan } from './scenarios.js'
import type { RunningServer } from './servers.js'

/**
 * `--instructions`: the scenario's servers run under callgrind (servers.ts starts them so), and each variant is
 * counted in instructions per request instead of timed.
 *
 * One variant at a time: `instructionWarmup` requests, uninstrumented; then callgrind is switched on in its server
 * (and in the lane it relays to), and two batches of `instructionRequests` requests are counted, each between a
 * zeroing and a dump of the counters. Requests go one after another on one keep-alive
 * connection per variant, the same connection from the first warm-up request to the last counted one: a new
 * connection brings objects of new shapes into node's HTTP code, V8 throws away the optimised code that assumed
 * the old ones, and the next batch would count a re-optimisation.
 */

const BATCHES = 2

/** One keep-alive connection sending a variant's request, one at a time, checking each status. */
class SequentialSender {
  private readonly client: Client
  private readonly path: string

  constructor (private readonly variant: PreparedVariant) {
    const url = new URL(variant.request.url)
    // No timeouts of its own: under callgrind a request takes tens of milliseconds, and a slow host more.
    this.client = new Client(url.origin, { pipelining: 1, headersTimeout: 0, bodyTimeout: 0 })
    this.path = url.pathname + url.search
  }

  /** Sends `count` requests; throws on the first status the variant may not answer. */
  async send (count: number): Promise<void> {
    const { method, headers, body } = this.variant.request
    for (let i = 0; i < count; i++) {
      const response = await this.client.request({ path: this.path, method, headers, body })
      await response.body.dump()
      if (!this.variant.expect.includes(response.statusCode)) throw new Error(`${this.variant.name} answered ${response.statusCode}`)
    }
  }

  close (): Promise<void> {
    return this.client.close()
  }
}

/** The processes counted for a variant: its server, and the upstream it relays to when that runs under callgrind too. */
function countedProcesses (variant: PreparedVariant): { server: Required<Pick<RunningServer, 'pid' | 'callgrindOut'>>, upstream?: Required<Pick<RunningServer, 'pid' | 'callgrindOut'>> } {
  const counted = (s: RunningServer | undefined): Required<Pick<RunningServer, 'pid' | 'callgrindOut'>> | undefined =>
    s?.callgrindOut === undefined ? undefined : { pid: s.pid, callgrindOut: s.callgrindOut }
  const server = counted(variant.server)
  if (server === undefined) throw new Error(`${variant.name}: its server is not running under callgrind`)
  const upstream = counted(variant.upstream)
  return upstream === undefined ? { server } : { server, upstream }
}

/** How long a variant's server is counted with no request, after its batches (its clock-driven work per second). */
const IDLE_SECONDS = 2

/**
 * Counts one variant: instrumentation on, BATCHES batches (zero, send, dump), then IDLE_SECONDS with no request
 * (zero, wait, dump), instrumentation off.
 */
async function countVariant (variant: PreparedVariant, sender: SequentialSender, requests: number, label: string, log: RunLog): Promise<{ batches: InstructionBatch[], idlePerSecond: number }> {
  const { server, upstream } = countedProcesses(variant)
  const processes = upstream === undefined ? [server] : [server, upstream]
  for (const p of processes) await callgrindControl(p.pid, ['-i', 'on'])
  const batches: InstructionBatch[] = []
  try {
    for (let b = 1; b <= BATCHES; b++) {
      for (const p of processes) await callgrindControl(p.pid, ['-z'])
      const started = Date.now()
      await sender.send(requests)
      const seconds = (Date.now() - started) / 1000
      const instructions = await dumpInstructions(server.pid, server.callgrindOut)
      const batch: InstructionBatch = upstream === undefined
        ? { requests, instructions, seconds }
        : { requests, instructions, seconds, upstreamInstructions: await dumpInstructions(upstream.pid, upstream.callgrindOut) }
      batches.push(batch)
      const lane = batch.upstreamInstructions === undefined ? '' : `, upstream ${Math.round(batch.upstreamInstructions / requests)}`
      log.progress(`[${label}] ${variant.name} batch ${b}/${BATCHES}: ${Math.round(instructions / requests)} instructions/request${lane} (${requests} requests, ${seconds.toFixed(1)} s)`)
    }
    await callgrindControl(server.pid, ['-z'])
    const idleStarted = Date.now()
    await sleep(IDLE_SECONDS * 1000)
    const idle = await dumpInstructions(server.pid, server.callgrindOut)
    const idlePerSecond = idle / ((Date.now() - idleStarted) / 1000)
    log.progress(`[${label}] ${variant.name} idle: ${Math.round(idlePerSecond)} instructions/s with no request`)
    return { batches, idlePerSecond }
  } finally {
    for (const p of processes) await callgrindControl(p.pid, ['-i', 'off'])
  }
}

/**
 * Runs a scenario's plan in instructions: each variant warmed up, then counted (see the file's
 * comment). A variant whose requests fail is reported as a failure and left out; the others still count.
 */
export async function runInstructionPlan (plan: ScenarioPlan, options: BenchOptions, log: RunLog): Promise<ScenarioResult> {
  for (const skipped of plan.skipped) log.warn(`${plan.id}: peer ${skipped.variant} skipped: ${skipped.reason}`)
  const senders = new Map(plan.variants.map((v) => [v.name, new SequentialSender(v)]))
  const counted = new Map<string, { batches: InstructionBatch[], idlePerSecond: number }>()
  try {
    // Each variant is counted right after its own warm-up, never after a pause: a V8 left idle for a while runs
    // its memory reducer's full GCs, which age out the bytecode and optimised code of functions not run meanwhile;
    // the counted batches then paid for compiling the whole request path again (seen: half the instructions of a
    // gateway's batch in TurboFan jobs, after it had waited for the other variants' warm-ups).
    for (const variant of plan.variants) {
      const sender = senders.get(variant.name) as SequentialSender
      const started = Date.now()
      try {
        await sender.send(options.instructionWarmup)
      } catch (error) {
        log.fail(`${plan.id} / ${variant.name} (warm-up): ${(error as Error).message}`)
        continue
      }
      log.progress(`[${plan.id}] warm-up ${variant.name}: ${options.instructionWarmup} requests in ${((Date.now() - started) / 1000).toFixed(1)} s`)
      try {
        counted.set(variant.name, await countVariant(variant, sender, options.instructionRequests, plan.id, log))
      } catch (error) {
        log.fail(`${plan.id} / ${variant.name} (counting): ${(error as Error).message}`)
      }
    }
  } finally {
    for (const sender of senders.values()) await sender.close()
  }
  const baselineName = plan.variants.find((v) => v.role === 'baseline')?.name
  const baselineBatches = baselineName === undefined ? undefined : counted.get(baselineName)?.batches
  const baselinePerRequest = baselineBatches === undefined ? undefined : instructionsPerRequest(baselineBatches)
  const variants: InstructionVariant[] = plan.variants.flatMap((v) => {
    const count = counted.get(v.name)
    return count === undefined ? [] : [instructionVariant(v.name, v.role, count.batches, baselinePerRequest, count.idlePerSecond)]
  })
  for (const v of variants) {
    if (Math.abs(v.batchDrift) > DRIFT_WARNING) {
      log.warn(`${plan.id} / ${v.name}: its two batches differ by ${(v.batchDrift * 100).toFixed(1)} % per request: a major GC or a re-optimisation fell in one of them (callgrind_annotate --inclusive=yes on the dumps shows which); more --instr-requests spread it, more --instr-warmup settles the code`)
    }
  }
  return {
    id: plan.id,
    title: plan.title,
    kind: 'instructions',
    baseline: baselineName,
    connections: 1,
    variants: [],
    runs: [],
    skipped: plan.skipped,
    instructions: {
      warmupRequests: options.instructionWarmup,
      batchRequests: options.instructionRequests,
      variants,
      comparisons: instructionComparisons(plan.id, variants),
    },
  }
}

/** Two consecutive batches further apart than this are flagged: the count was not settled. */
const DRIFT_WARNING = 0.03
