import Fastify, { type FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import { Registry } from 'prom-client'
import type { GatewayMetrics } from './metrics.js'
import type { Readiness, ReadinessReport } from './readiness.js'

/** What the admin listener answers from: one process's own gateway, or the primary of `server.workers` > 1. */
export interface AdminServerDeps {
  /** The Prometheus text of /metrics. */
  metrics (): Promise<string>
  /** What /readyz reports. */
  readiness (): Promise<ReadinessReport>
  /** /healthz's body besides `status` (one process: its config version; the primary: its serving workers). */
  health (): Record<string, unknown>
  /** Mounts what else the listener serves (the console and `admin.auth`), before the probes' routes. */
  extend? (app: FastifyInstance): void
}

/** The admin answers of one process serving its own gateway (`server.workers: 1`, and tests). */
export function processAdminDeps (metrics: GatewayMetrics, readiness: Readiness, configVersion: () => number): AdminServerDeps {
  return {
    metrics: () => metrics.registry.metrics(),
    readiness: () => readiness.report(),
    health: () => ({ config_version: configVersion() }),
  }
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
  deps.extend?.(app)
  app.get('/metrics', async function metrics (_request, reply) {
    reply.header('content-type', Registry.PROMETHEUS_CONTENT_TYPE)
    reply.header('cache-control', 'no-store')
    return deps.metrics()
  })
  app.get('/healthz', async function health (_request, reply) {
    reply.header('cache-control', 'no-store')
    return { status: 'ok', ...deps.health() }
  })
  app.get('/readyz', async function ready (_request, reply) {
    const report = await deps.readiness()
    reply.code(report.ready ? 200 : 503).header('cache-control', 'no-store')
    const body = { status: report.ready ? 'ready' : 'not_ready', checks: report.checks, failed: report.failed }
    const full = report.config === undefined ? body : { ...body, config: report.config }
    return report.workers === undefined ? full : { ...full, workers: report.workers }
  })
  return app
}

/**
 * Opens a built admin server on `settings` and logs its URL (`Admin listening on …`, which tests and operators
 * look for); closes it and throws when the port is taken.
 */
export async function listenAdmin (admin: FastifyInstance, settings: { host: string, port: number }, logger: Logger): Promise<void> {
  try {
    await admin.listen({ host: settings.host, port: settings.port })
  } catch (error) {
    await admin.close()
    throw error
  }
  const address = admin.server.address()
  const port = typeof address === 'object' && address !== null ? address.port : settings.port
  const host = settings.host.includes(':') ? `[${settings.host}]` : settings.host
  logger.info({ admin_url: `http://${host}:${port}` }, `Admin listening on http://${host}:${port} (console /, /metrics, /healthz, /readyz)`)
}
