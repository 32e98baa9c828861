import cluster from 'node:cluster'
import type { GatewayConfig } from '../config/types.js'
import { stdoutDestination } from '../logging/log-destination.js'
import { createLogger, warnOfDroppedLines } from '../logging/logger.js'
import { writePidFile } from '../ipc/pid-file.js'
import { isLanegateWorker } from '../ipc/worker-marker.js'
import { startPrimaryAdmin } from './primary-admin.js'
import { runPrimary } from './primary-process.js'
import { resolveWorkerCount } from './worker-count.js'
import type { ConfigStoreRoutesOptions } from '../config-store/admin-routes.js'

export interface ClusterStartOptions {
  file: string
  /** The config as `lanegate start` read and validated it (server.loadStartConfig): not read again here. */
  config: GatewayConfig
  /** `--config-store`: the primary's admin listener serves the store's /config/… routes. */
  store?: ConfigStoreRoutesOptions
}

/**
 * `lanegate start` with `server.workers` > 1 (or `auto` on a multi-core host): this process becomes the
 * primary and forks the workers, each a whole gateway on the same port (node:cluster shares the listener). In a
 * worker, or when one process is configured, it returns false and the caller serves as usual.
 */
export async function startCluster (options: ClusterStartOptions): Promise<boolean> {
  if (isLanegateWorker()) return false
  const { config } = options
  const workers = resolveWorkerCount(config.server.workers)
  if (workers <= 1) return false
  if (!cluster.isPrimary) {
    // Another cluster manager (pm2's cluster mode) forked this process: it runs one gateway, as that manager asks.
    console.error(`server.workers (${config.server.workers}) is ignored: this process was forked by another cluster manager (pm2?), which decides how many run`)
    return false
  }
  // Asynchronous like the workers' logs: a stdout pipe nobody reads must not block the primary's signal handling.
  const destination = stdoutDestination()
  const logger = createLogger(config.server.log_level, destination)
  warnOfDroppedLines(logger, destination)
  // The admin port taken: the start fails before any worker is forked (the caller prints the one line).
  const admin = await startPrimaryAdmin(config, workers, logger, () => destination.dropped, options.store)
  runPrimary({ file: options.store === undefined ? options.file : undefined, workers, graceMs: config.server.shutdown_grace_ms, logger, destination, admin })
  // The primary is the process to signal: it passes reloads and stops on to the workers.
  const pidFile = writePidFile(config.server.data_dir)
  logger.info({ pid_file: pidFile }, `signal pid ${process.pid} (in ${pidFile}): SIGHUP reloads, SIGTERM stops; or lanegate reload / lanegate stop`)
  return true
}

