import type { FastifyInstance } from 'fastify'
import type { GatewayConfig } from '../config/types.js'
import type { AccessLog } from '../logging/access-log/access-log.js'
import type { CompletedRequestObserver, RequestLogController } from '../observability/request-log-controller.js'
import type { SpanExport } from '../observability/tracing/span-export.js'
import type { Gateway } from '../reload/live-config.js'

/** How long the shutdown lets the sinks and the exporter send what they hold (never longer on a stalled one). */
const CLOSE_FLUSH_MS = 1_000

/** What is told of each answered request: the access log and span export, each off until its config section is set. */
export interface Telemetry {
  readonly accessLog: AccessLog
  readonly spans: SpanExport
}

/**
 * Makes the access log and span export follow `access_log` and `telemetry.traces`: the current config now, each
 * reload's when it is swapped in, both closed (bounded) with the app. After each change `controller.observer` is
 * the one function that tells the ones that are on, or undefined while both are off.
 */
export function followTelemetryConfig (app: FastifyInstance, gateway: Gateway, telemetry: Telemetry, controller: RequestLogController): void {
  const apply = (config: GatewayConfig): void => {
    telemetry.accessLog.configure(config.access_log)
    telemetry.spans.configure(config.telemetry?.traces)
    controller.observer = combined(telemetry.accessLog.on ? telemetry.accessLog.record : undefined, telemetry.spans.on ? telemetry.spans.record : undefined)
  }
  apply(gateway.current().config)
  const stop = gateway.onSwap(function applyTelemetryConfig (snapshot) { apply(snapshot.config) })
  app.addHook('onClose', async function closeTelemetry () {
    stop()
    controller.observer = undefined
    await Promise.all([telemetry.accessLog.close(CLOSE_FLUSH_MS), telemetry.spans.close(CLOSE_FLUSH_MS)])
  })
}

/** One observer calling those that are on (undefined for none), so the log controller makes a single call. */
function combined (first: CompletedRequestObserver | undefined, second: CompletedRequestObserver | undefined): CompletedRequestObserver | undefined {
  if (first === undefined || second === undefined) return first ?? second
  return function observeBoth (request, reply) {
    first(request, reply)
    second(request, reply)
  }
}
