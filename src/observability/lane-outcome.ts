import { GatewayError } from '../errors/gateway-error.js'
import type { UpstreamOutcome } from './metrics.js'
import { outcomeOfStatus, recordUpstream } from './recorders.js'

/**
 * The upstream outcome of a relay that failed before the caller's answer started, or undefined when the failure
 * was not the lane's (the caller went away, its body was too large).
 */
export function laneFailureOutcome (error: unknown): UpstreamOutcome | undefined {
  if (!(error instanceof GatewayError)) return undefined
  if (error.code === 'upstream_timeout') return 'timeout'
  if (error.code !== 'upstream_error') return undefined
  const status = error.fields.upstream_status
  if (typeof status !== 'number') return undefined
  return status === 0 ? 'unreachable' : outcomeOfStatus(status)
}

/**
 * Records a lane relay in `lanegate_upstream_*` once it settles: resolved means the lane's 1xx-3xx answer is
 * being relayed (`ok`); a rejection is classified by laneFailureOutcome. The duration is until that point (the
 * lane's first byte or its failure), not the end of a streamed body.
 */
export async function recordLaneRelay (storeId: string, relay: Promise<void>): Promise<void> {
  const started = performance.now()
  try {
    await relay
    recordUpstream(storeId, 'ok', (performance.now() - started) / 1000)
  } catch (error) {
    const outcome = laneFailureOutcome(error)
    if (outcome !== undefined) recordUpstream(storeId, outcome, (performance.now() - started) / 1000)
    throw error
  }
}
