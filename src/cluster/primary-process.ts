import cluster, { type Worker } from 'node:cluster'
import { RateLimiterClusterMaster } from 'rate-limiter-flexible'
import type { Logger } from 'pino'
import { watchConfigFile } from '../config/watch-config.js'
import type { AsyncLogDestination } from '../logging/log-destination.js'
import { WORKER_MARKER } from '../ipc/worker-marker.js'
import { withGatewayNodeFlags } from '../node-tuning/node-flags.js'
import type { ReloadCommand, ShutdownCommand } from '../ipc/messages.js'
import type { PrimaryAdmin } from './primary-admin.js'
import { serveWorkerCounters } from './primary-counters.js'
import { serveWorkerSlots } from '../limits/connection-slots.js'
import { coordinateProbes } from './primary-probes.js'
import { coordinateBreakers } from './primary-breakers.js'

/** A worker that dies sooner than this after its start counts as crash-looping: its restart is delayed. */
const QUICK_CRASH_MS = 5_000
const MAX_RESTART_DELAY_MS = 10_000
/** After the grace period, how long the primary waits on top for workers to close their stores and exit. */
const EXIT_MARGIN_MS = 2_000
/** How long the primary waits for its buffered log lines before it exits (a reader that stalled gets no more). */
const LOG_FLUSH_MS = 500

export interface PrimaryOptions {
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
 */
export function runPrimary (options: PrimaryOptions): void {
  new Primary(options).start()
}

class Primary {
  private stopping = false
  private serving = false
  private quickCrashes = 0
  private readonly startedAt = new Map<number, number>()
  /** Workers that listen (and so follow the primary's commands); one still booting has no command listener yet. */
  private readonly listening = new Set<number>()
  private readonly stopCounting: () => void
  private readonly stopSlots: () => void
  private stopWatching: () => void = () => {}
  private readonly logger: Logger

  constructor (private readonly options: PrimaryOptions) {
    this.logger = options.logger
    // rate-limiter-flexible's cluster limiter: the token endpoint's limiters in the workers count here.
    void new RateLimiterClusterMaster()
    this.stopCounting = serveWorkerCounters()
    // connection-limit's open-connection counts, one per key for every worker.
    this.stopSlots = serveWorkerSlots()
    // One worker probes the upstreams for the host; the others apply its results (upstream/probe-sharing.ts).
    coordinateProbes()
    // A worker's circuit breaker openings and closings reach the others (upstream/breaker-sharing.ts).
    coordinateBreakers()
  }

  start (): void {
    // Every worker starts with the gateway's node options, however the primary was started (node-flags.ts).
    cluster.setupPrimary({ execArgv: withGatewayNodeFlags(process.execArgv) })
    cluster.on('listening', (worker: Worker) => {
      this.serving = true
      this.listening.add(worker.id)
    })
    cluster.on('exit', (worker: Worker, code: number | null, signal: string | null) => { this.workerExited(worker, code, signal) })
    const reload = (): void => { this.reload() }
    // Following a config store, no file is the config: only SIGHUP makes the workers look at the store's head.
    if (this.options.file !== undefined) this.stopWatching = watchConfigFile(this.options.file, reload)
    // Stays registered while stopping (then ignored): without a listener, SIGHUP's default action kills the process.
    process.on('SIGHUP', reload)
    const shutdown = (signal: NodeJS.Signals): void => { this.shutdown(signal) }
    process.on('SIGTERM', shutdown)
    process.on('SIGINT', shutdown)
    this.logger.info({ workers: this.options.workers }, 'primary starting workers')
    for (let i = 0; i < this.options.workers; i++) this.fork()
  }

  private fork (): void {
    // The marker tells a worker of ours from any node:cluster worker (ipc/worker-marker.ts).
    const worker = cluster.fork({ [WORKER_MARKER]: '1' })
    this.startedAt.set(worker.id, Date.now())
  }

  private workerExited (worker: Worker, code: number | null, signal: string | null): void {
    const lived = Date.now() - (this.startedAt.get(worker.id) ?? 0)
    this.listening.delete(worker.id)
    this.startedAt.delete(worker.id)
    this.options.admin?.workerExited(worker.id)
    if (this.stopping) return
    if (!this.serving && code !== 0) {
      // Its one line (e.g. the dependency and address) is already on stderr; restarting would loop forever.
      this.stopping = true
      this.logger.error({ worker_pid: worker.process.pid, code, signal }, 'a worker could not start: stopping')
      this.stopCounting()
      this.stopSlots()
      this.stopWatching()
      killWorkers()
      this.exitAfterLogs(1)
      return
    }
    this.quickCrashes = lived < QUICK_CRASH_MS ? this.quickCrashes + 1 : 0
    const delay = this.quickCrashes === 0 ? 0 : Math.min(100 * 2 ** this.quickCrashes, MAX_RESTART_DELAY_MS)
    this.logger.error({ worker_pid: worker.process.pid, code, signal, restart_in_ms: delay }, 'worker exited; starting a new one')
    setTimeout(() => { if (!this.stopping) this.fork() }, delay)
  }

  private reload (): void {
    if (this.stopping) return
    this.logger.info(this.options.file === undefined ? 'SIGHUP: every worker checks the config store' : 'config file changed or SIGHUP: every worker reloads')
    broadcast({ channel: 'lanegate:reload' })
  }

  private shutdown (signal: NodeJS.Signals): void {
    if (this.stopping) {
      this.logger.error({ signal }, 'second signal: killing the workers')
      killWorkers()
      process.exit(1)
    }
    this.stopping = true
    this.options.admin?.markDraining()
    this.logger.info({ signal, workers: Object.keys(cluster.workers ?? {}).length }, 'shutting down: every worker finishes its in-flight requests')
    this.stopWatching()
    broadcast({ channel: 'lanegate:shutdown' })
    // A replacement still booting would miss the command and boot on into serving, holding the primary until
    // its deadline: it has no request to finish, so it stops now.
    for (const worker of Object.values(cluster.workers ?? {})) {
      if (worker !== undefined && !this.listening.has(worker.id)) worker.process.kill('SIGTERM')
    }
    const deadline = setTimeout(() => {
      this.logger.error('workers still running after the grace period: killing them')
      killWorkers()
      this.exitAfterLogs(1)
    }, this.options.graceMs + EXIT_MARGIN_MS)
    waitForWorkers().then(() => {
      clearTimeout(deadline)
      this.stopCounting()
      this.stopSlots()
      this.logger.info('every worker stopped')
      this.exitAfterLogs(0)
    }, () => {})
  }

  /** Exits once the buffered log lines are out, or LOG_FLUSH_MS later (a stalled stdout reader gets no more). */
  private exitAfterLogs (code: number): void {
    // forceCloseConnections: a scraper's keep-alive connection does not hold the close up.
    void Promise.all([this.options.admin?.close().catch(() => {}), this.options.destination.flush(LOG_FLUSH_MS)]).then(() => process.exit(code))
  }
}

function killWorkers (): void {
  for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGKILL')
}

function broadcast (message: ReloadCommand | ShutdownCommand): void {
  for (const worker of Object.values(cluster.workers ?? {})) {
    if (worker?.isConnected() === true) worker.send(message)
  }
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
