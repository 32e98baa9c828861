import type { FastifyBaseLogger } from 'fastify'
import type { GatewayMetrics } from '../../observability/metrics.js'
import type { SinkHooks } from './sink.js'

/** The access log's drop counter (lanegate_access_log_dropped_total) and failure warnings. */
export function accessLogHooks (logger: FastifyBaseLogger, metrics: GatewayMetrics | undefined): SinkHooks {
  return {
    onDropped (sink, lines) {
      if (metrics !== undefined) metrics.accessLogDropped.cell(sink).value += lines
    },
    onFailure (sink, error) {
      logger.warn({ sink, err: error }, 'access log sink failed: its lines are dropped until it works again')
    },
  }
}
