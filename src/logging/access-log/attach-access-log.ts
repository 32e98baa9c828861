import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import type { GatewayConfig } from '../../config/types.js'
import type { GatewayMetrics } from '../../observability/metrics.js'
import { AccessLog } from './access-log.js'
import type { SinkHooks } from './sink.js'

/** How long the shutdown lets the sinks write out their queued lines (it never waits longer on a stalled sink). */
const CLOSE_FLUSH_MS = 1_000

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

/** What of the live config the access log follows: the current config and each one a reload swaps in. */
export interface AccessLogConfigSource {
  current (): { config: GatewayConfig }
  onSwap (listener: (snapshot: { config: GatewayConfig }) => void): () => void
}

/**
 * Makes `accessLog` follow the gateway's config: the current snapshot's `access_log` now, each reload's when it is
 * swapped in, and closed (bounded) when the app closes.
 */
export function followAccessLogConfig (app: FastifyInstance, gateway: AccessLogConfigSource, accessLog: AccessLog): void {
  accessLog.configure(gateway.current().config.access_log)
  const stop = gateway.onSwap(function applyAccessLogConfig (snapshot) { accessLog.configure(snapshot.config.access_log) })
  app.addHook('onClose', async function closeAccessLog () {
    stop()
    await accessLog.close(CLOSE_FLUSH_MS)
  })
}
