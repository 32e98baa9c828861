import type { TimedSample } from './gc-tail.js'
import type { LatencySummary } from './stats.js'

/** One measurement the load-generator process runs: autocannon against one URL. */
export interface LoadJob {
  /** Full URL, path included. */
  url: string
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  headers?: Record<string, string>
  body?: string
  connections: number
  /** Seconds to run (ignored when `amount` is set). */
  duration: number
  /** Stop after this many responses instead of after `duration`. */
  amount?: number
  /** A file of bearer tokens, one a line: each request takes the next one (memory scenario). */
  tokensFile?: string
  /** The system under test (its process tree's CPU is read around the run). */
  serverPid: number
  /** The upstream the system under test relays to, if any (reported separately). */
  upstreamPid?: number
  /** Per-request timeout in seconds (autocannon counts a timeout as an error). */
  timeoutSeconds?: number
  /** 1 with an https URL: a new connection (a full TLS handshake) per request (handshake-load.ts). */
  reconnectRate?: number
  /**
   * The latency scenario: stamp every response on the run's monotonic clock (bench/mono-clock.ts) and return the
   * run's window and its samples above p99 (`tail`), to be set beside the servers' GC pauses.
   */
  timeTail?: boolean
}

/** What one measurement produced. Latency comes from every response's own time, not from a histogram. */
export interface LoadResult {
  /** Responses received (any status). */
  requests: number
  durationSeconds: number
  /** Responses per second. */
  rps: number
  /** Count per status code, e.g. {"200": 1234}. */
  statusCounts: Record<string, number>
  /** Connection errors and timeouts. */
  errors: number
  timeouts: number
  /** The first error's message, to make a failure readable. */
  firstError?: string
  latencyMs: LatencySummary
  /** CPU (user + system) the system under test used during the run, µs, all processes of its tree. */
  serverCpuMicros: number
  /** The part of it the tree's root process used alone (with server.workers > 1: the primary's share). */
  serverRootCpuMicros?: number
  upstreamCpuMicros?: number
  /** Bytes the server's JS heap allocated over the run (a Node server with the heap preload: bench/heap-preload.ts). */
  serverHeapBytes?: number
  /** Share of one core the load generator itself used; near 1 means it, not the server, was the limit. */
  loadgenCpu: number
  /** With `timeTail`: when the run began and ended, on the monotonic clock (ms). */
  window?: { fromMs: number, toMs: number }
  /** With `timeTail`: the samples slower than the run's p99, when each started and ended (not kept in the results file). */
  tail?: TimedSample[]
}

/** Parent → load generator. */
export type WorkerRequest = { type: 'run', id: number, job: LoadJob }
/** Load generator → parent. */
export type WorkerReply = { type: 'result', id: number, result: LoadResult } | { type: 'error', id: number, message: string }
