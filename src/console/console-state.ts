import type { GatewayMetrics } from '../observability/metrics.js'
import { isLanegateWorker } from '../ipc/worker-marker.js'
import { SampleRing } from './samples.js'

/** What a process keeps for the console: its metrics and the ring of their last 15 minutes. */
export interface ConsoleState {
  readonly metrics: GatewayMetrics
  readonly ring: SampleRing
  /** A worker of `server.workers` > 1 (its route limits are counted in the primary). */
  readonly inWorker: boolean
  stop (): void
}

/** Starts sampling `metrics` once a second (the admin listener's process, or each worker for its primary). */
export function startConsoleState (metrics: GatewayMetrics): ConsoleState {
  const ring = new SampleRing(metrics)
  return { metrics, ring, inWorker: isLanegateWorker(), stop: () => { ring.stop() } }
}
