import Fastify from 'fastify'
import t from 'tap'
import { parseGatewayConfig } from '../../src/config/second-pass/load-gateway-config.js'
import { AccessLog } from '../../src/logging/access-log/access-log.js'
import { RequestLogController } from '../../src/observability/request-log-controller.js'
import { SpanExport } from '../../src/observability/tracing/span-export.js'
import { followTelemetryConfig } from '../../src/start/follow-telemetry.js'
import { gatewayFixture, type GatewayFixture } from '../helpers/gateway-fixture.js'

t.test('with the access log and span export both off, the log controller has no observer to call (one field read per request)', async (t) => {
  const base = gatewayFixture('minimal')
  const gw = await base.boot(t, { logLevel: 'warn' })
  const apply = async (fixture: GatewayFixture): Promise<void> => {
    const loaded = await parseGatewayConfig(fixture.text(), 'gateway.yaml', { env: { ...process.env }, adjust: (l) => { l.config.server.data_dir = gw.dataDir } })
    gw.gateway.apply(loaded)
  }
  const app = Fastify()
  t.teardown(() => app.close())
  const controller = new RequestLogController()
  const accessLog = new AccessLog({ onDropped () {}, onFailure () {} })
  const spans = new SpanExport(() => {})
  followTelemetryConfig(app, gw.gateway, { accessLog, spans }, controller)
  t.equal(controller.observer, undefined, 'both off at boot')

  const logged = base.set('access_log', { sinks: [{ type: 'stdout' }] })
  await apply(logged)
  t.equal(controller.observer, accessLog.record, 'the access log alone: its own function, called directly')
  await apply(logged.set('telemetry', { traces: { endpoint: 'http://127.0.0.1:9/v1/traces' } }))
  t.ok(controller.observer !== undefined && controller.observer !== accessLog.record && controller.observer !== spans.record, 'both on: one function calling both')
  await apply(base.set('telemetry', { traces: { endpoint: 'http://127.0.0.1:9/v1/traces' } }))
  t.equal(controller.observer, spans.record, 'span export alone')
  await apply(base)
  t.equal(controller.observer, undefined, 'both off again after a reload')
})
