import type { Report } from './config-error.js'
import type { GatewayConfig } from './types.js'

/** `telemetry.traces`: an export request holds at most the whole queue. */
export function checkTelemetry (config: GatewayConfig, report: Report): void {
  const traces = config.telemetry?.traces
  if (traces !== undefined && traces.batch_size > traces.max_queue) report(['telemetry', 'traces', 'batch_size'], `must be at most max_queue (${traces.max_queue})`)
}
