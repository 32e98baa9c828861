/**
 * How the orchestrator and the servers' GC preload talk (bench/gc-preload.ts, bench/gc-client.ts): the preload
 * listens on the Unix socket named by this environment variable; a request is one JSON line of GcWindowRequest,
 * the answer one JSON line of GcWindowPauses (bench/gc-ring.ts) or `{"error": …}`.
 */
export const GC_SOCKET_ENV = 'LANEGATE_BENCH_GC_SOCKET'

/** A window of the run's monotonic clock (bench/mono-clock.ts), ms. */
export interface GcWindowRequest {
  fromMs: number
  toMs: number
}
