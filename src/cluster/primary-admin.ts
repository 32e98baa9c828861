import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import type { GatewayConfig } from '../config/types.js'
import { buildAdminServer, listenAdmin } from '../observability/admin-server.js'
import { adminSettings } from '../observability/admin-settings.js'
import { mountConsole } from '../console/console-routes.js'
import { clusterConsoleSource } from './cluster-console.js'
import { ClusterMetrics } from './cluster-metrics.js'
import { ClusterReadiness } from './cluster-readiness.js'
import { WorkerRoster } from './worker-roster.js'
import { mountConfigStoreRoutes, type ConfigStoreRoutesOptions } from '../config-store/admin-routes.js'

/** The primary's admin listener and what it needs told (its drain, a worker's exit). */
export interface PrimaryAdmin {
  /** SIGTERM reached the primary: /readyz answers 503 from now on. */
  markDraining (): void
  /** A worker exited: its last counted totals stay in /metrics. */
  workerExited (workerId: number): void
  close (): Promise<void>
}

/**
 * With `server.workers` > 1 the primary alone serves the admin listener (the workers open none), so one scrape
 * reports the whole gateway and one probe the readiness of every worker: /metrics sums the workers' registries
 * (cluster-metrics.ts), /readyz asks each worker (cluster-readiness.ts), /healthz is the primary's own liveness
 * with the number of serving workers. Opened before the workers are forked: a taken admin port stops the start,
 * as it does for one process. Undefined with `admin: false`.
 */
export async function startPrimaryAdmin (config: GatewayConfig, workers: number, logger: Logger, logLinesDropped: () => number, store?: ConfigStoreRoutesOptions): Promise<PrimaryAdmin | undefined> {
  const settings = adminSettings(config)
  if (settings === undefined) return undefined
  const roster = new WorkerRoster(workers)
  const metrics = new ClusterMetrics(roster, logLinesDropped)
  const readiness = new ClusterReadiness(roster)
  const admin: FastifyInstance = buildAdminServer({
    metrics: () => metrics.text(),
    readiness: () => readiness.report(),
    health: () => ({ workers: roster.serving().length }),
    extend: (app) => {
      mountConsole(app, config.admin === false ? undefined : config.admin, clusterConsoleSource(config, roster, readiness))
      mountConfigStoreRoutes(app, store)
    },
  })
  await listenAdmin(admin, settings, logger)
  return {
    markDraining: () => { readiness.markDraining() },
    workerExited: (workerId) => { metrics.retire(workerId) },
    close: () => admin.close(),
  }
}
