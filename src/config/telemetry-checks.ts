import { formatPath, type ConfigProblem } from './config-error.js'
import type { GatewayConfig } from './types.js'

/** `telemetry.traces`: an export request holds at most the whole queue. */
export function checkTelemetry (config: GatewayConfig): { problem: ConfigProblem, segments: (string | number)[] }[] {
  const traces = config.telemetry?.traces
  if (traces === undefined || traces.batch_size <= traces.max_queue) return []
  const segments = ['telemetry', 'traces', 'batch_size']
  return [{ problem: { path: formatPath(segments), message: `must be at most max_queue (${traces.max_queue})` }, segments }]
}
