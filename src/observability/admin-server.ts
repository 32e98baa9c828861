import Fastify, { type FastifyInstance } from 'fastify'
import type { GatewayMetrics } from './metrics.js'
import type { Readiness } from './readiness.js'

export interface AdminServerDeps {
  metrics: GatewayMetrics
  readiness: Readiness
  /** The config version in use, for /healthz. */
  configVersion: () => number
}

/**
 * The admin listener: a fastify app of its own on `admin.host:admin.port` (default 127.0.0.1:9464), so metrics
 * and probes are never on the public port and cost the public app no routes or hooks.
 * - `GET /metrics`: Prometheus text format (prom-client registry);
 * - `GET /healthz`: liveness, 200 while the process serves;
 * - `GET /readyz`: 200 when ready, else 503 with the checks and the list of those that failed.
 */
export function buildAdminServer (deps: AdminServerDeps): FastifyInstance {
  const app = Fastify({ logger: false, forceCloseConnections: true })
  app.get('/metrics', async function metrics (_request, reply) {
    reply.header('content-type', deps.metrics.registry.contentType)
    reply.header('cache-control', 'no-store')
    return deps.metrics.registry.metrics()
  })
  app.get('/healthz', async function health (_request, reply) {
    reply.header('cache-control', 'no-store')
    return { status: 'ok', config_version: deps.configVersion() }
  })
  app.get('/readyz', async function ready (_request, reply) {
    const report = await deps.readiness.report()
    reply.code(report.ready ? 200 : 503).header('cache-control', 'no-store')
    return { status: report.ready ? 'ready' : 'not_ready', checks: report.checks, failed: report.failed }
  })
  return app
}
