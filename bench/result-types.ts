import type { GcWindowSummary, OutsideGc } from './gc-tail.js'
import type { LoadResult } from './load-job.js'
import type { Spread } from './stats.js'

/** A variant's part in a scenario: the baseline it is compared with, the gateway, or a peer for reference. */
export type VariantRole = 'baseline' | 'subject' | 'peer'

/** One variant's numbers over all rounds of a scenario. Spreads are median, min and max over rounds. */
export interface VariantSummary {
  name: string
  role: VariantRole
  rps: Spread
  /** rps ÷ the baseline's rps in the same round. */
  ratio: Spread
  p50Ms: Spread
  p99Ms: Spread
  /** Latency scenario: p90, p99.9 and the slowest response too (the throughput tables leave them out). */
  p90Ms?: Spread
  p999Ms?: Spread
  maxMs?: Spread
  /** Latency scenario: this variant's percentile minus the baseline's in the same round. */
  addedP50Ms?: Spread
  addedP99Ms?: Spread
  addedP999Ms?: Spread
  /** CPU of the system under test's process tree per response (µs). */
  serverCpuUsPerRequest: Spread
  /** With server.workers > 1: the primary's own share of serverCpuUsPerRequest (µs; the workers scenario). */
  primaryCpuUsPerRequest?: Spread
  /**
   * Bytes the server's JS heap allocated per response (a Node server with the heap preload, bench/heap-preload.ts:
   * what its GCs freed plus the growth of its used heap over the run); absent for nginx.
   */
  heapBytesPerRequest?: Spread
  /** CPU of the upstream lane per response (µs), for proxies. */
  upstreamCpuUsPerRequest?: Spread
  /** Highest share of its core the load generator used in any round. */
  loadgenCpuMax: number
  /** True when that share was ≥ 0.9: this variant's rps is the generator's limit, not the server's. */
  loadgenSaturated: boolean
  /** Status counts summed over the measured rounds. */
  statusCounts: Record<string, number>
  requests: number
}

/** Latency scenario: how a run's samples above p99 met its servers' GC pauses (bench/gc-summary.ts). */
export interface TailInGc {
  /** Samples slower than the run's p99. */
  samples: number
  /** Of them, those that overlapped a pause of the variant's server: started, ended or ran through one. */
  duringServerGc: number
  /** duringServerGc by the kind of the (longest) pause each met: minor, major, incremental, weak callbacks. */
  serverGcKinds?: Record<string, number>
  /** How many would overlap by chance, given when the pauses fell and how long the samples were (gc-tail.ts). */
  serverByChance: number
  /** Of them, those that overlapped a pause of the upstream (the bench lane), for proxies. */
  duringUpstreamGc?: number
  /** Those that met no pause of the server: how many followed a pause or came in episodes (gc-tail.ts outsideGc). */
  outsideServerGc?: OutsideGc
}

/** Latency scenario: the GC pauses a run's servers saw during the run (their GC preload, bench/gc-preload.ts). */
export interface RunGc {
  /** The variant's server; null when it is not a Node process (nginx): it has no GC to report. */
  server: GcWindowSummary | null
  /** The upstream it relays to (the bench lane), when it has one; null when that is not Node. */
  upstream?: GcWindowSummary | null
  tail: TailInGc
}

/**
 * Latency scenario, one variant's server over the rounds (spreads of per-round figures): how many of its requests a
 * pause fell on, how long a pause lasted on average, and how far its own p99 lay above its own p50. At c=1 a request
 * that meets a pause waits for it; once pauses fall on about 1 % of requests or more, p99 − p50 is about one mean
 * pause (docs/performance.md, "Issue 24, the ninth session").
 */
export interface PauseAgainstSpread {
  /** The server's GC pauses per 100 requests of the round. */
  pausesPer100Requests: Spread
  /** The round's GC time over its pauses, ms. */
  meanPauseMs: Spread
  /** The round's p99 minus its p50, ms (the variant's own latency, not the added one). */
  p99MinusP50Ms: Spread
}

/** Latency scenario: one variant's GC pauses over the rounds (spreads of per-round figures) and its tail summed. */
export interface VariantGc {
  variant: string
  /** The server process watched (e.g. gateway-main, lane, http-proxy-3, nginx). */
  server: string
  /** False for a server that is not Node (nginx): no pause figures. */
  node: boolean
  /** Pauses per round, their total ms per round, the longest pause (ms) of each round. */
  count?: Spread
  totalMs?: Spread
  longestMs?: Spread
  /** V8's young generation's capacity at the end of each round, MB (bench/gc-ring.ts: why it matters to the tail). */
  youngGenerationMB?: Spread
  upstream?: { name: string, count: Spread, totalMs: Spread, longestMs: Spread }
  /** Per round, its pauses beside its own spread of latency (gc-summary.ts `pauseAgainstSpread`: why p99 sits where it does). */
  pauseAgainstSpread?: PauseAgainstSpread
  tail: TailInGc
  /** Rounds in which a preload's ring no longer held the whole window (its figures are then a floor). */
  incompleteRounds: number
}

/** The memory scenario's measurements (bytes). */
export interface MemoryMeasurement {
  tokens: number
  requests: number
  rssAtStart: number
  rssAfterTokens: number
  rssAfterRequests: number
  peakRss: number
  tokenIssueSeconds: number
  load: LoadResult
  /** The soak after those requests (`--soak-minutes`): RSS sampled while the same traffic goes on. */
  soak?: SoakMeasurement
}

/** RSS over a soak: the first sample is taken when the soak starts (right after the memory requests). */
export interface SoakMeasurement {
  minutes: number
  samples: Array<{ seconds: number, rss: number }>
  requests: number
  /** Responses that were not 200, and connection errors or timeouts, over the whole soak. */
  failures: number
}

/** The websocket scenario's measurements: echo rates by variant, and the RSS of idle connections (bytes). */
export interface WebSocketMeasurement {
  echoConnections: number
  messageBytes: number
  variants: Array<{ name: string, messagesPerSecond: Spread, ratio: Spread }>
  idleConnections: number
  rssIdleGateway: number
  rssWithIdleConnections: number
}

/** The config-push scenario: push-to-applied times (ms) of instances following the config store. */
export interface ConfigPushMeasurement {
  pushes: number
  instances: Array<{ instance: string, p50Ms: number, maxMs: number }>
  overall: { p50Ms: number, maxMs: number }
}

/**
 * The proxy-mirror scenario's counts over the whole scenario, warm-ups included: the mirrored route's requests and
 * its copies as the gateway's /metrics count them (`lanegate_http_requests_total`,
 * `lanegate_upstream_mirror_requests_total`), and the copies the slow lane received.
 */
export interface MirrorMeasurement {
  /** The mirror's settings: the share copied, the copies in flight at most, how late the slow lane answers (ms). */
  percent: number
  maxInFlight: number
  delayMs: number
  /** Requests the mirrored route answered. */
  requests: number
  sent: number
  droppedInFlight: number
  droppedBodyTooLarge: number
  /** Copies the slow lane received (X-Lanegate-Mirror), read after the last could be answered. */
  received: number
}

/** `--console`: a subject with the console closed and the same on a gateway with it open, same rounds (console-cost.ts). */
export interface ConsolePair {
  /** `<closed>+console`, or `<closed>+closed-twin` (the control: a second closed gateway of the same config). */
  open: string
  closed: string
  /** Rounds in which both ran. */
  rounds: number
  /** The gateway's CPU per response (µs), its process alone (the poller is outside its tree). */
  openCpuUsPerRequest: Spread
  closedCpuUsPerRequest: Spread
  /** Open ÷ closed CPU per response, taken within each round (issue 23: ≤ 1.03). */
  cpuRatio: Spread
}

/** `--console`, no traffic: CPU per second over the same windows (µs of CPU per second of wall time). */
export interface ConsoleIdle {
  windows: number
  seconds: number
  openCpuUsPerSecond: Spread
  closedCpuUsPerSecond: Spread
  /** The poller's own (it runs on the load generator's core; reported, never billed to a gateway). */
  pollerCpuUsPerSecond: Spread
}

/** What `--console` measured in one scenario. */
export interface ConsoleMeasurement {
  pairs: ConsolePair[]
  idle?: ConsoleIdle
  /** The poller's rounds (overview + upstreams) over the whole scenario: answered with 200s, or not. */
  polls: { ok: number, failed: number }
}

/** `--instructions`: one measured batch of a variant (its requests, sent one after another on one connection). */
export interface InstructionBatch {
  requests: number
  /** Instructions (callgrind's `Ir`) the server process executed during the batch, every thread. */
  instructions: number
  /** The same for the upstream the variant relays to (the lane), when it ran under callgrind too. */
  upstreamInstructions?: number
  /** Wall-clock seconds the batch took (under callgrind: tens of times the native time). */
  seconds?: number
}

/** `--instructions`: one variant's instruction counts. */
export interface InstructionVariant {
  name: string
  role: VariantRole
  /** Two batches, one after the other: their counts per request show whether the hot path was warm and flat. */
  batches: InstructionBatch[]
  /** Instructions per request over all batches. */
  perRequest: number
  /** The second batch's per-request count ÷ the first's, minus 1 (how far two consecutive batches differ). */
  batchDrift: number
  upstreamPerRequest?: number
  /** baseline's per-request instructions ÷ this variant's: the throughput ratio a CPU-bound server would see. */
  ratio?: number
  /**
   * Instructions per second of the server with no request (counted right after the batches): its clock-driven work
   * (timers such as the event-loop-delay monitor's every 10 ms), which runs the same whatever the traffic.
   */
  idlePerSecond?: number
  /**
   * `perRequest` less the idle rate over the batches' wall time: under callgrind a request takes tens of times its
   * native wall time, so clock-driven work lands in every request's count, far more than it does natively.
   */
  netPerRequest?: number
}

/** `--instructions`: a comparison the scenario is read for (e.g. auth-get against bare fastify sending the same answer). */
export interface InstructionComparison {
  what: string
  /** The variant compared with (the denominator of a throughput ratio). */
  reference: string
  subject: string
  /** reference's per-request instructions ÷ subject's. */
  ratio: number
  /** The same from both variants' `netPerRequest` (idle clock work taken out), when both have it. */
  netRatio?: number
}

/** What `--instructions` measured in one scenario. */
export interface InstructionMeasurement {
  /** Sequential requests per variant before counting (uninstrumented), and per measured batch. */
  warmupRequests: number
  batchRequests: number
  variants: InstructionVariant[]
  comparisons: InstructionComparison[]
}

/**
 * `--telemetry`, after the rounds: what the trace and access-log variants put out, beside the requests measured
 * on each (the rounds', or the counted batches'; warm-up and token requests put out more on top).
 */
export interface TelemetryOutputCheck {
  /** Spans the OTLP sink received from the gateway sampling every trace, in how many exports. */
  tracedSpans: number
  tracedExports: number
  tracedRequests: number
  /** Spans one of its requests makes (SERVER, and a relay's CLIENT). */
  spansPerRequest: number
  /** Spans received from the gateway sampling none (must be 0). */
  untracedSpans: number
  /** Lines in the access-file gateway's file, each a JSON object with a status, and the requests measured on it. */
  accessLines: number
  accessRequests: number
}

export interface ScenarioResult {
  id: string
  title: string
  kind: 'throughput' | 'latency' | 'memory' | 'websocket' | 'instructions' | 'config-push'
  baseline?: string
  connections: number
  variants: VariantSummary[]
  /** Every measured run, in the order it ran: round, variant, result (latency scenario: and its servers' GC). */
  runs: Array<{ round: number, variant: string, result: LoadResult, gc?: RunGc }>
  /** Latency scenario: responses per variant per round (`--latency-samples`). */
  samplesPerRound?: number
  /** Latency scenario: the GC pauses of each variant's servers and how its tail met them. */
  gc?: VariantGc[]
  memory?: MemoryMeasurement
  websocket?: WebSocketMeasurement
  configPush?: ConfigPushMeasurement
  /** Peers that were asked for but could not run here, with why. */
  skipped: Array<{ variant: string, reason: string }>
  /** proxy-service: how the proxied requests of the whole scenario spread over the two equal targets. */
  split?: Array<{ target: string, requests: number }>
  /**
   * proxy-service: one of the two targets killed during a first run (`during`, failures allowed until it is
   * ejected), then a second run (`after`) that must see no failed GET.
   */
  failover?: { during: LoadResult, after: LoadResult }
  /** proxy-mirror: the gateway's mirror counters and the copies the slow lane received, over the whole scenario. */
  mirror?: MirrorMeasurement
  /** `--console`: the console's cost, open against closed in the same rounds, and idle. */
  console?: ConsoleMeasurement
  /** `--instructions`: instructions per request by variant (kind `instructions`: no rounds, no req/s). */
  instructions?: InstructionMeasurement
  /** `--telemetry`: the trace and access-log variants' output, checked after the rounds. */
  telemetry?: TelemetryOutputCheck
}

/** An issue-6 target and what this run measured for it. */
export interface TargetCheck {
  scenario: string
  what: string
  goal: string
  measured: string
  met: boolean
  /** A goal kept in the report for comparison with earlier runs, no longer a target (shown as "–"). */
  reportOnly?: boolean
}

/** The whole file written to bench/results/<date>.json. */
export interface BenchResult {
  harness: 'lanegate-bench'
  schemaVersion: 1
  startedAt: string
  finishedAt: string
  machine: {
    cpus: number
    cpuModel: string
    node: string
    platform: string
    pinned: boolean
    serverCore?: number
    loadgenCore?: number
  }
  options: Record<string, unknown>
  /** The metric that decides, named before the run (bench/targets.ts DECIDING_METRIC); absent in older results. */
  decidingMetric?: string
  scenarios: ScenarioResult[]
  targets: TargetCheck[]
  /** Runs that broke an expectation (non-2xx where none is expected, errors, timeouts). Non-empty = failed. */
  failures: string[]
  /** E.g. load generator near saturation, peers skipped, not pinned. */
  warnings: string[]
}
