import type { AddressInfo } from 'node:net'
import { bootGateway, type Booted } from './boot.js'
import { followPrimary } from '../cluster/worker.js'
import { answerPrimaryAdmin } from '../cluster/worker-admin.js'
import { shareProbesWithPrimary } from '../cluster/worker-probes.js'
import { shareBreakersWithPrimary } from '../cluster/worker-breakers.js'
import { watchConfigFile } from '../config/watch-config.js'
import { startAdminListener } from './admin-listener.js'
import { workerConsole } from '../console/worker-console.js'
import { warnIssuerMismatch } from './issuer-mismatch.js'
import { isLanegateWorker } from '../ipc/worker-marker.js'
import { writePidFile } from '../ipc/pid-file.js'
import { handleShutdownSignals } from './shutdown-signals.js'
import { loadGatewayConfig, type LoadedGatewayConfig } from '../config/second-pass/load-gateway-config.js'
import { rotateListenerTls } from '../tls/listener-rotation.js'
import { Server as TlsServer } from 'node:tls'
import type { StoreStart, StoreStartOptions } from '../config-store/start-config.js'
import type { Follower, FollowState } from '../config-store/follower.js'

export interface StartOptions {
  file: string
  /** Overrides server.port. */
  port?: number
  /** Overrides server.host. */
  host?: string
  /** `--config-store`: follow the fleet's config store instead of watching `file` (src/config-store/). */
  store?: StoreStart
}

/**
 * `--port` and `--host` over the file's `server` settings: applied at boot and on every reload, so the overrides
 * stay and a reload sees no `server` change.
 */
function startOverrides (options: StartOptions): (loaded: Pick<LoadedGatewayConfig, 'config'>) => void {
  return (loaded) => {
    if (options.port !== undefined) loaded.config.server.port = options.port
    if (options.host !== undefined) loaded.config.server.host = options.host
  }
}

/**
 * Reads and validates the config `lanegate start` serves, with its overrides: the one validation at start, read
 * first for `server.workers` (cluster/primary.ts) and then booted as it is by {@link startServer}.
 */
export async function loadStartConfig (options: StartOptions): Promise<LoadedGatewayConfig> {
  return loadGatewayConfig(options.file, { adjust: startOverrides(options) })
}

/**
 * `lanegate start --config-store URL`: the store's head (or the copy saved in the data dir) instead of the file;
 * sets `options.store`, which makes {@link startServer} follow the store.
 */
export async function loadStoreStart (options: StartOptions, store: StoreStartOptions): Promise<LoadedGatewayConfig> {
  const { loadStoreStartConfig } = await import('../config-store/start-config.js')
  const { loaded, follow } = await loadStoreStartConfig(store, startOverrides(options))
  options.store = follow
  return loaded
}

/**
 * `lanegate start`: boot (retrying PostgreSQL and Redis up to server.startup_timeout_ms), listen (and the admin
 * listener), reload on file change or SIGHUP, and on SIGTERM/SIGINT report not-ready, stop accepting, let
 * in-flight requests finish (up to server.shutdown_grace_ms; new requests get 503), then close the stores and
 * the admin listener and exit (shutdown-signals.ts).
 */
export async function startServer (options: StartOptions, loaded?: LoadedGatewayConfig): Promise<Booted> {
  // A worker of lanegate's own primary (not merely a node:cluster worker: pm2's cluster mode forks those too).
  const lanegateWorker = isLanegateWorker()
  // Before the boot: the checks the first snapshot starts must already know that only one worker probes.
  if (lanegateWorker) shareProbesWithPrimary()
  // Likewise circuit breakers: one worker's openings protect the others (upstream/breaker-sharing.ts).
  if (lanegateWorker) shareBreakersWithPrimary()
  // `loaded` (from loadStartConfig) is booted as it is; the overrides still apply to every reload.
  const booted = await bootGateway({ file: options.store === undefined ? options.file : undefined, loaded, adjust: startOverrides(options) })
  const { app, gateway, logger } = booted
  const { server } = gateway.current().config
  let admin: Awaited<ReturnType<typeof startAdminListener>>
  // A worker of `server.workers` > 1 opens no admin listener: the primary serves it and asks the workers over IPC
  // (answering before the worker listens, so the primary never asks a worker that cannot answer yet).
  const stopAnswering = lanegateWorker ? answerPrimaryAdmin({ ...booted, console: workerConsole(booted) }) : undefined
  try {
    await app.listen({ port: server.port, host: server.host })
    // The admin port is taken (another gateway on this host?): do not run half-observable.
    admin = lanegateWorker ? undefined : await startAdminListener(booted, options.store)
  } catch (error) {
    await booted.close()
    throw error
  }
  const listening = app.server.address() as AddressInfo
  warnIssuerMismatch(gateway, logger, { host: server.host, port: listening.port, tls: server.tls !== undefined })
  if (!lanegateWorker) {
    const pidFile = writePidFile(server.data_dir)
    logger.info({ pid_file: pidFile }, `signal pid ${process.pid} (in ${pidFile}): SIGHUP reloads, SIGTERM stops; or lanegate reload / lanegate stop`)
  }

  // server.tls: the certificate is rotated when its files change and on SIGHUP (src/tls/listener-rotation.ts).
  const rotation = server.tls === undefined
    ? undefined
    : rotateListenerTls(tlsListener(app.server), server.tls, logger, (loaded) => {
      booted.metrics?.certificateExpiry.set('listener', Math.floor(loaded.pair.notAfter.getTime() / 1000))
    }, { started: booted.listenerTls })

  const follower = options.store === undefined ? undefined : await followConfigStore(booted, options.store)
  let stopping = false
  const reload = (): void => {
    if (stopping) return
    rotation?.reload()
    // Following the store, SIGHUP looks at its head now (and tries a refused version again).
    if (follower !== undefined) follower.checkNow()
    else void gateway.reload()
  }
  // A worker of `server.workers` > 1 reloads when its primary says so; only the primary polls the file.
  const stopWatching = lanegateWorker ? followPrimary(reload) : follower !== undefined ? () => {} : watchConfigFile(options.file, reload)
  // Stays registered during the drain (then ignored): without a listener, SIGHUP's default action kills the process.
  process.on('SIGHUP', reload)

  handleShutdownSignals({
    logger,
    graceMs: server.shutdown_grace_ms,
    drain: async () => {
      stopping = true
      booted.readiness.markDraining()
      stopWatching()
      await follower?.stop()
      rotation?.stop()
      await booted.close()
      await admin?.close()
      stopAnswering?.()
    },
    // An HTTP/2 server has no closeAllConnections: fastify's close has already sent its sessions GOAWAY.
    abortConnections: () => (app.server as { closeAllConnections?: () => void }).closeAllConnections?.(),
    // Likewise closeIdleConnections (HTTP/1.1 servers only).
    closeIdleConnections: () => (app.server as { closeIdleConnections?: () => void }).closeIdleConnections?.(),
    flushLogs: booted.flushLogs,
  })
  return booted
}

/** The listener as the TLS server it is with `server.tls` (fastify types it as plain HTTP whatever it serves). */
function tlsListener (listener: object): TlsServer {
  if (listener instanceof TlsServer) return listener
  throw new Error('server.tls is set but the listener is not a TLS server')
}

/** Starts following the store, its applies and refusals counted in the gateway's metrics. */
async function followConfigStore (booted: Booted, store: StoreStart): Promise<Follower> {
  const { followStore } = await import('../config-store/follower.js')
  const metrics = booted.metrics
  const showVersion = (state: FollowState): void => {
    metrics?.configStoreVersion.reset()
    metrics?.configStoreVersion.set({ version: String(state.applied.version), sha256: state.applied.sha256 }, 1)
  }
  const follower = followStore({
    ...store,
    gateway: booted.gateway,
    logger: booted.logger,
    onApplied: showVersion,
    onRefused: () => metrics?.configStoreRefused.inc(),
  })
  showVersion(follower.state())
  if (store.refused !== undefined) metrics?.configStoreRefused.inc()
  // /readyz (and, under server.workers, each worker's entry of the primary's) says what runs.
  booted.readiness.describeConfig(() => readyConfig(follower.state()))
  return follower
}

/** /readyz's `config` while following the store: what runs, and whether the store answers (it does not decide readiness). */
function readyConfig (state: FollowState): Record<string, unknown> {
  return {
    source: 'store',
    version: state.applied.version,
    sha256: state.applied.sha256,
    author: state.applied.author,
    applied_at: new Date(state.applied.at).toISOString(),
    store_reachable: state.storeReachable,
    refused: state.refused === undefined ? null : { version: state.refused.version, reason: state.refused.reason },
  }
}
