import cluster, { type Worker } from 'node:cluster'
import { RateLimiterClusterMaster } from 'rate-limiter-flexible'
import type { Logger } from 'pino'
import type { GatewayConfig } from '../config/types.js'
import { watchConfigFile } from '../config/watch-config.js'
import { stdoutDestination, type AsyncLogDestination } from '../logging/log-destination.js'
import { createLogger, warnOfDroppedLines } from '../logging/logger.js'
import { writePidFile } from '../ipc/pid-file.js'
import { isLanegateWorker, WORKER_MARKER } from '../ipc/worker-marker.js'
import { withGatewayNodeFlags } from '../node-tuning/node-flags.js'
import type { ReloadCommand, ShutdownCommand } from '../ipc/messages.js'
import { startPrimaryAdmin, type PrimaryAdmin } from './primary-admin.js'
import { serveWorkerCounters } from './primary-counters.js'
import { serveWorkerSlots } from '../limits/connection-slots.js'
import { coordinateProbes } from './primary-probes.js'
import { coordinateBreakers } from './primary-breakers.js'
import { resolveWorkerCount } from './worker-count.js'
import type { ConfigStoreRoutesOptions } from '../config-store/admin-routes.js'

/** A worker that dies sooner than this after its start counts as crash-looping: its restart is delayed. */
const QUICK_CRASH_MS = 5_000
const MAX_RESTART_DELAY_MS = 10_000
/** After the grace period, how long the primary waits on top for workers to close their stores and exit. */
const EXIT_MARGIN_MS = 2_000
/** How long the primary waits for its buffered log lines before it exits (a reader that stalled gets no more). */
const LOG_FLUSH_MS = 500

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

interface PrimaryOptions {
  /** The config file the primary watches; undefined when the workers follow a config store (no file is read). */
  file: string | undefined
  workers: number
  graceMs: number
  logger: Logger
  destination: AsyncLogDestination
  /** The admin listener (/metrics summed over the workers, /readyz of every worker); undefined with `admin: false`. */
  admin: PrimaryAdmin | undefined
}

/**
 * The primary: counts route and token limits for every worker (memory driver), restarts a worker that dies,
 * polls the config file once and tells every worker to reload (also on SIGHUP, which never stops it), and on
 * SIGTERM/SIGINT asks every worker to drain, waiting up to server.shutdown_grace_ms (+2 s) before killing what is
 * left; a second signal kills them at once. A worker that fails to start before any worker serves (a dependency
 * still down after server.startup_timeout_ms, a port in use) stops the primary with exit 1, as a single process
 * would exit; later deaths are restarts. It serves no public request itself; it serves the admin listener
 * (primary-admin.ts), which answers 503 on /readyz from the first stop signal until it exits.
 *
 * Long by design: the primary's event wiring (fork, worker exit and restart, SIGHUP reload, SIGTERM/SIGINT drain)
 * shares its stopping and serving state; each handler is a short named function.
 */
function runPrimary (options: PrimaryOptions): void {
  const { logger } = options
  // rate-limiter-flexible's cluster limiter: the token endpoint's limiters in the workers count here.
  void new RateLimiterClusterMaster()
  const stopCounting = serveWorkerCounters()
  // connection-limit's open-connection counts, one per key for every worker.
  const stopSlots = serveWorkerSlots()
  // One worker probes the upstreams for the host; the others apply its results (upstream/probe-sharing.ts).
  coordinateProbes()
  // A worker's circuit breaker openings and closings reach the others (upstream/breaker-sharing.ts).
  coordinateBreakers()
  // Every worker starts with the gateway's node options, however the primary was started (node-flags.ts).
  cluster.setupPrimary({ execArgv: withGatewayNodeFlags(process.execArgv) })
  let stopping = false
  let serving = false
  const startedAt = new Map<number, number>()
  let quickCrashes = 0

  /** Exits once the buffered log lines are out, or LOG_FLUSH_MS later (a stalled stdout reader gets no more). */
  function exitAfterLogs (code: number): void {
    // forceCloseConnections: a scraper's keep-alive connection does not hold the close up.
    void Promise.all([options.admin?.close().catch(() => {}), options.destination.flush(LOG_FLUSH_MS)]).then(() => process.exit(code))
  }

  function killWorkers (): void {
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGKILL')
  }

  // Workers that listen (and so follow the primary's commands); one still booting has no command listener yet.
  const listening = new Set<number>()
  cluster.on('listening', function onWorkerListening (worker: Worker) {
    serving = true
    listening.add(worker.id)
  })

  function fork (): void {
    // The marker tells a worker of ours from any node:cluster worker (ipc/worker-marker.ts).
    const worker = cluster.fork({ [WORKER_MARKER]: '1' })
    startedAt.set(worker.id, Date.now())
  }

  cluster.on('exit', function onWorkerExit (worker: Worker, code: number | null, signal: string | null) {
    const lived = Date.now() - (startedAt.get(worker.id) ?? 0)
    listening.delete(worker.id)
    startedAt.delete(worker.id)
    options.admin?.workerExited(worker.id)
    if (stopping) return
    if (!serving && code !== 0) {
      // Its one line (e.g. the dependency and address) is already on stderr; restarting would loop forever.
      stopping = true
      logger.error({ worker_pid: worker.process.pid, code, signal }, 'a worker could not start: stopping')
      stopCounting()
      stopSlots()
      stopWatching()
      killWorkers()
      exitAfterLogs(1)
      return
    }
    quickCrashes = lived < QUICK_CRASH_MS ? quickCrashes + 1 : 0
    const delay = quickCrashes === 0 ? 0 : Math.min(100 * 2 ** quickCrashes, MAX_RESTART_DELAY_MS)
    logger.error({ worker_pid: worker.process.pid, code, signal, restart_in_ms: delay }, 'worker exited; starting a new one')
    setTimeout(() => { if (!stopping) fork() }, delay)
  })

  function broadcast (message: ReloadCommand | ShutdownCommand): void {
    for (const worker of Object.values(cluster.workers ?? {})) {
      if (worker?.isConnected() === true) worker.send(message)
    }
  }

  function reload (): void {
    // Stays registered while stopping (then ignored): without a listener, SIGHUP's default action kills the process.
    if (stopping) return
    logger.info(options.file === undefined ? 'SIGHUP: every worker checks the config store' : 'config file changed or SIGHUP: every worker reloads')
    broadcast({ channel: 'lanegate:reload' })
  }
  // Following a config store, no file is the config: only SIGHUP makes the workers look at the store's head.
  const stopWatching = options.file === undefined ? () => {} : watchConfigFile(options.file, reload)
  process.on('SIGHUP', reload)

  function shutdown (signal: NodeJS.Signals): void {
    if (stopping) {
      logger.error({ signal }, 'second signal: killing the workers')
      killWorkers()
      process.exit(1)
    }
    stopping = true
    options.admin?.markDraining()
    logger.info({ signal, workers: Object.keys(cluster.workers ?? {}).length }, 'shutting down: every worker finishes its in-flight requests')
    stopWatching()
    broadcast({ channel: 'lanegate:shutdown' })
    // A replacement still booting would miss the command and boot on into serving, holding the primary until
    // its deadline: it has no request to finish, so it stops now.
    for (const worker of Object.values(cluster.workers ?? {})) {
      if (worker !== undefined && !listening.has(worker.id)) worker.process.kill('SIGTERM')
    }
    const deadline = setTimeout(() => {
      logger.error('workers still running after the grace period: killing them')
      killWorkers()
      exitAfterLogs(1)
    }, options.graceMs + EXIT_MARGIN_MS)
    waitForWorkers().then(() => {
      clearTimeout(deadline)
      stopCounting()
      stopSlots()
      logger.info('every worker stopped')
      exitAfterLogs(0)
    }, () => {})
  }
  process.on('SIGTERM', shutdown)
  process.on('SIGINT', shutdown)

  logger.info({ workers: options.workers }, 'primary starting workers')
  for (let i = 0; i < options.workers; i++) fork()
}

function waitForWorkers (): Promise<void> {
  return new Promise((resolve) => {
    const check = (): void => {
      if (Object.keys(cluster.workers ?? {}).length === 0) {
        cluster.off('exit', check)
        cluster.off('disconnect', check)
        resolve()
      }
    }
    // A worker leaves cluster.workers before the later of its 'exit' and 'disconnect' events, in either order.
    cluster.on('exit', check)
    cluster.on('disconnect', check)
    check()
  })
}
