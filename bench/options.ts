import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { RESULTS_DIR } from './paths.js'
import { PEER_NAMES, type PeerName } from './peers.js'
import { samplesForTail } from './stats.js'
import { INSTRUCTION_SCENARIOS, instructionsUnsupported } from './instruction-scenarios.js'
import { SCENARIO_IDS, type ScenarioId } from './scenario-ids.js'

export { SCENARIO_IDS, type ScenarioId }

/**
 * Samples above p99.9 a latency round must leave (issue 24): with 20, one slow response more or less moves p99.9 by
 * at most one rank of twenty, and p99 rests on 200. A timed round gave each variant what its speed allowed: at one
 * connection on this box, 5 s were about 7,500–16,000 responses of the gateway (p99.9 on 7–16) and 2,000–4,000 of
 * the slowest peer (on 2–4); `--quick`'s 2 s, 40 % of that.
 */
export const LATENCY_TAIL = 20
/** Responses per variant per round of the latency scenario: 20,000, the fewest that leave LATENCY_TAIL above p99.9. */
export const LATENCY_SAMPLES = samplesForTail(0.999, LATENCY_TAIL)
/** `--quick`: half of it (p99.9 on 10 samples, p99 on 100), so a quick run stays short. */
export const LATENCY_TAIL_QUICK = 10
export const LATENCY_SAMPLES_QUICK = samplesForTail(0.999, LATENCY_TAIL_QUICK)

/** Everything a run is told on the command line. */
export interface BenchOptions {
  scenarios: ScenarioId[]
  /** Seconds per measured run of one variant (throughput scenarios). */
  durationSeconds: number
  /** Responses per measured run of one variant in the latency scenario (sample-counted rounds, not timed). */
  latencySamples: number
  /** Seconds each variant runs, unmeasured, before the first round. */
  warmupSeconds: number
  rounds: number
  /** Concurrent connections of the throughput scenarios (the latency scenario uses 1). */
  connections: number
  /** Memory scenario: requests sent, and distinct valid tokens they rotate through. */
  memoryRequests: number
  memoryTokens: number
  /** Memory scenario: minutes to keep serving after its requests, RSS sampled every soakSampleSeconds (0: no soak). */
  soakMinutes: number
  soakSampleSeconds: number
  /** Folder for <date>.json and <date>.md. */
  outDir: string
  /** Pin servers to core 0 and the load generator to core 1 (needs taskset and two cores). */
  pin: boolean
  /** Include the peers found on the machine (nginx, fast-gateway, Express Gateway, raw http-proxy-3, the undici and net floors). */
  peers: boolean
  /** `--peers LIST`: only these peers (when peers run at all); absent: every peer found. */
  onlyPeers?: PeerName[]
  /** Run the gateway under `node --cpu-prof` and print where its time went. */
  profile: boolean
  /**
   * Another built checkout of lanegate (its `dist/` and `gateway.yaml`): its gateway runs as an extra variant of
   * `auth-get`, `live-proxy` and `latency-c1` in the same rounds, for before/after figures of a change.
   */
  compare?: string
  quick: boolean
  /**
   * Measure what an open operator console costs (issue 23): `auth-get` and `live-proxy` get a variant of their
   * subject on a second gateway of the same config with the console open (`<subject>+console`: its admin listener
   * serves, its ring samples once a second, a poller in its own process on the load generator's core asks for two
   * views once a second each, as an open page does), in the same rounds; then both gateways' idle CPU is read.
   */
  console: boolean
  /**
   * Measure what traces and the access log cost (issue 42): `auth-get` and `live-proxy` get their subject's request
   * on gateways of the same config plus span export at sampling 1 (`-trace-100`) and 0 (`-trace-0`) to the bench's
   * OTLP sink, and plus the access log to a file (`-access-file`), beside a second plain process (`-twin`), in the
   * same rounds; after them, the sink's spans and the file's lines are checked.
   */
  telemetry: boolean
  /**
   * Count instructions instead of timing (bench/instructions.ts): every server runs under valgrind's callgrind,
   * each variant gets `instructionWarmup` requests, then two batches of `instructionRequests` are counted.
   */
  instructions: boolean
  instructionWarmup: number
  instructionRequests: number
  /** `--signing-alg`: the algorithm of the key the bench's gateways generate (`issuer.algorithm`); unset, gateway.yaml's. */
  signingAlg?: SigningAlg
}

/** The algorithms `issuer.algorithm` accepts. */
export const SIGNING_ALGS = ['EdDSA', 'ES256', 'RS256'] as const
export type SigningAlg = (typeof SIGNING_ALGS)[number]

/**
 * `--instructions` defaults. Warm-up: natively V8 is still optimising the gateway's request path after 5,000
 * sequential requests and done by about 10,000 (counted with --trace-opt on the auth-get route and on bare
 * fastify); fewer leave the counted batches paying the compiler. Batches: a young-generation GC costs about half
 * a million instructions and comes every few hundred requests, so a batch holds a whole number of them give or
 * take one: over 1,000 requests that is under 1 % of bare fastify's count, over 300 it was 3 %. A gateway's
 * major GC (an incremental marking of its whole heap, ~150 M instructions) comes every few thousand requests and
 * is not spread that well: its batches can differ by tens of per cent (both are reported; more requests per batch
 * narrow it). A batch of 1,000 takes a few seconds under callgrind.
 */
export const INSTRUCTION_WARMUP = 10_000
export const INSTRUCTION_REQUESTS = 1000

export const USAGE = `npm run bench -- [options]

  --quick                 short run: 2 s per measurement, 3 rounds, latency-c1 10,000 responses a round, memory 50k requests /
                          5k tokens, websocket 2,000 idle connections
  --scenario ID[,ID]      ${SCENARIO_IDS.join(', ')} (default: all)
  --duration S            seconds per measurement (default 5; latency-c1 and proxy-mirror count responses instead)
  --latency-samples N     responses per variant per round of latency-c1 and proxy-mirror (default ${LATENCY_SAMPLES}:
                          p99.9 on the 20 slowest; --quick ${LATENCY_SAMPLES_QUICK})
  --warmup S              unmeasured seconds per variant before the rounds (default 2; latency-c1, proxy-mirror: that
                          on each of 3 connections, one after another, so its code has seen connections close)
  --rounds N              rounds in rotating order (default 5)
  --connections N         connections for throughput scenarios (default 50)
  --memory-requests N     memory scenario requests (default 1000000)
  --memory-tokens N       memory scenario distinct tokens (default 100000)
  --soak-minutes N        memory scenario: keep serving N more minutes, RSS sampled every 30 s (default 0)
  --out DIR               where <date>.json and <date>.md go (default bench/results)
  --no-pin                do not pin processes to cores with taskset
  --no-peers              skip nginx / fast-gateway / Express Gateway / http-proxy-3 / undici-floor / net-floor
  --peers LIST            only these peers (${PEER_NAMES.join(', ')}), e.g. nginx,undici-floor
  --profile               profile the gateway (node --cpu-prof) and list its hot spots
  --console               also run auth-get's and live-proxy's subject on a gateway with the operator console open
                          (polled once a second from a process on the load generator's core), in the same rounds:
                          its CPU per request against the console closed, beside a second closed gateway of the
                          same config (the control: how far two processes differ), and both gateways' idle CPU per second
  --telemetry             also run auth-get's and live-proxy's subject on gateways exporting spans (sampling 1 and 0)
                          to a bench OTLP sink and writing the access log to a file, beside a second plain gateway
                          (the control), in the same rounds; the sink's spans and the file's lines are checked after
  --compare DIR           also run the gateway of another built checkout (e.g. a git worktree of the commit
                          before a change) as a variant of auth-get, live-proxy and latency-c1, in the same rounds
  --instructions          count instructions per request under valgrind's callgrind instead of timing: the
                          same variants, each warmed up, then two counted batches; repeatable whatever the host's
                          speed, but user space only (no kernel, no syscalls). Scenarios: ${INSTRUCTION_SCENARIOS.join(', ')}
                          (default: auth-get, live-proxy)
  --instr-warmup N        --instructions: sequential requests per variant before counting (default ${INSTRUCTION_WARMUP})
  --instr-requests N      --instructions: requests per counted batch (default ${INSTRUCTION_REQUESTS})
  --signing-alg ALG       the gateways' signing key type (${SIGNING_ALGS.join(', ')}; default: gateway.yaml's issuer.algorithm)
`

/** Whether a run includes `peer`: peers on, and `--peers` (when given) names it. */
export function peerWanted (options: Pick<BenchOptions, 'peers' | 'onlyPeers'>, peer: PeerName): boolean {
  return options.peers && (options.onlyPeers === undefined || options.onlyPeers.includes(peer))
}

function positiveNumber (name: string, value: string | undefined, fallback: number, integer = true): number {
  if (value === undefined) return fallback
  const n = Number(value)
  if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n))) throw new Error(`--${name} must be a positive ${integer ? 'integer' : 'number'}, got "${value}"`)
  return n
}

/** Parses the bench command line; throws an Error naming the bad option. */
export function parseBenchArgs (argv: string[]): BenchOptions {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      quick: { type: 'boolean', default: false },
      scenario: { type: 'string', multiple: true },
      duration: { type: 'string' },
      'latency-samples': { type: 'string' },
      warmup: { type: 'string' },
      rounds: { type: 'string' },
      connections: { type: 'string' },
      'memory-requests': { type: 'string' },
      'memory-tokens': { type: 'string' },
      'soak-minutes': { type: 'string' },
      out: { type: 'string' },
      'no-pin': { type: 'boolean', default: false },
      'no-peers': { type: 'boolean', default: false },
      peers: { type: 'string' },
      profile: { type: 'boolean', default: false },
      compare: { type: 'string' },
      console: { type: 'boolean', default: false },
      telemetry: { type: 'boolean', default: false },
      instructions: { type: 'boolean', default: false },
      'instr-warmup': { type: 'string' },
      'instr-requests': { type: 'string' },
      'signing-alg': { type: 'string' },
    },
  })
  const instructions = values.instructions === true
  if (!instructions && (values['instr-warmup'] !== undefined || values['instr-requests'] !== undefined)) throw new Error('--instr-warmup and --instr-requests go with --instructions')
  if (instructions && values.console === true) throw new Error('--console does not go with --instructions (the console\'s cost is per second, not per request)')
  if (instructions && values.profile === true) throw new Error('--profile does not go with --instructions (callgrind already sees every instruction)')
  const quick = values.quick === true
  const requested = (values.scenario ?? []).flatMap((s) => s.split(',')).map((s) => s.trim()).filter((s) => s !== '')
  for (const id of requested) {
    if (!(SCENARIO_IDS as readonly string[]).includes(id)) throw new Error(`unknown scenario "${id}" (known: ${SCENARIO_IDS.join(', ')})`)
  }
  const scenarios = requested.length === 0
    ? instructions ? ['auth-get', 'live-proxy'] as ScenarioId[] : [...SCENARIO_IDS]
    : SCENARIO_IDS.filter((id) => requested.includes(id))
  if (instructions) {
    for (const id of scenarios) {
      const why = instructionsUnsupported(id)
      if (why !== undefined) throw new Error(`--instructions cannot count scenario "${id}": ${why}`)
    }
  }
  const onlyPeers = values.peers === undefined ? undefined : values.peers.split(',').map((p) => p.trim()).filter((p) => p !== '')
  for (const peer of onlyPeers ?? []) {
    if (!(PEER_NAMES as readonly string[]).includes(peer)) throw new Error(`unknown peer "${peer}" (known: ${PEER_NAMES.join(', ')})`)
  }
  if (onlyPeers !== undefined && values['no-peers'] === true) throw new Error('--peers and --no-peers contradict each other')
  const signingAlg = values['signing-alg']
  if (signingAlg !== undefined && !(SIGNING_ALGS as readonly string[]).includes(signingAlg)) throw new Error(`unknown --signing-alg "${signingAlg}" (known: ${SIGNING_ALGS.join(', ')})`)
  const memoryTokens = positiveNumber('memory-tokens', values['memory-tokens'], quick ? 5_000 : 100_000)
  return {
    scenarios,
    durationSeconds: positiveNumber('duration', values.duration, quick ? 2 : 5, false),
    latencySamples: positiveNumber('latency-samples', values['latency-samples'], quick ? LATENCY_SAMPLES_QUICK : LATENCY_SAMPLES),
    warmupSeconds: values.warmup === '0' ? 0 : positiveNumber('warmup', values.warmup, quick ? 1 : 2, false),
    rounds: positiveNumber('rounds', values.rounds, quick ? 3 : 5),
    connections: positiveNumber('connections', values.connections, 50),
    memoryRequests: positiveNumber('memory-requests', values['memory-requests'], quick ? 50_000 : 1_000_000),
    memoryTokens,
    soakMinutes: values['soak-minutes'] === '0' ? 0 : positiveNumber('soak-minutes', values['soak-minutes'], 0, false),
    soakSampleSeconds: 30,
    outDir: values.out ?? RESULTS_DIR,
    pin: values['no-pin'] !== true,
    peers: values['no-peers'] !== true,
    ...(onlyPeers === undefined ? {} : { onlyPeers: onlyPeers as PeerName[] }),
    profile: values.profile === true,
    ...(values.compare === undefined ? {} : { compare: resolve(values.compare) }),
    quick,
    console: values.console === true,
    telemetry: values.telemetry === true,
    instructions,
    instructionWarmup: positiveNumber('instr-warmup', values['instr-warmup'], INSTRUCTION_WARMUP),
    instructionRequests: positiveNumber('instr-requests', values['instr-requests'], INSTRUCTION_REQUESTS),
    ...(signingAlg === undefined ? {} : { signingAlg: signingAlg as SigningAlg }),
  }
}
