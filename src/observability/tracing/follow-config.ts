import type { FastifyInstance } from 'fastify'
import type { GatewayConfig } from '../../config/types.js'
import type { SpanExport } from './span-export.js'

/** How long the shutdown lets the exporter send the spans it holds (it never waits longer on a dead collector). */
const CLOSE_FLUSH_MS = 1_000

/** What of the gateway the span export follows: the current config and each one a reload swaps in. */
export interface ConfigFollower {
  current (): { config: GatewayConfig }
  onSwap (listener: (snapshot: { config: GatewayConfig }) => void): () => void
}

/** Makes `spans` follow `telemetry.traces`: the current config now, each reload's when it is swapped in, closed (bounded) with the app. */
export function followSpanExportConfig (app: FastifyInstance, gateway: ConfigFollower, spans: SpanExport): void {
  spans.configure(gateway.current().config.telemetry?.traces)
  const stop = gateway.onSwap(function applyTelemetryConfig (snapshot) { spans.configure(snapshot.config.telemetry?.traces) })
  app.addHook('onClose', async function closeSpanExport () {
    stop()
    await spans.close(CLOSE_FLUSH_MS)
  })
}
