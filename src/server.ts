import cluster from 'node:cluster'
import type { AddressInfo } from 'node:net'
import { bootGateway, type Booted } from './boot.js'
import { followPrimary } from './cluster/worker.js'
import { answerPrimaryAdmin } from './cluster/worker-admin.js'
import { watchConfigFile } from './config/watch-config.js'
import { startAdminListener } from './observability/admin-listener.js'
import { issuerMismatch } from './issuer-mismatch.js'
import { handleShutdownSignals } from './shutdown-signals.js'

export interface StartOptions {
  file: string
  /** Overrides server.port. */
  port?: number
  /** Overrides server.host. */
  host?: string
}

/**
 * `lanegate start`: boot (retrying PostgreSQL and Redis up to server.startup_timeout_ms), listen (and the admin
 * listener), reload on file change or SIGHUP, and on SIGTERM/SIGINT report not-ready, stop accepting, let
 * in-flight requests finish (up to server.shutdown_grace_ms; new requests get 503), then close the stores and
 * the admin listener and exit (shutdown-signals.ts).
 */
export async function startServer (options: StartOptions): Promise<Booted> {
  const booted = await bootGateway({
    file: options.file,
    // Applied at boot and on every reload, so the overrides stay and a reload sees no `server` change.
    adjust: (loaded) => {
      if (options.port !== undefined) loaded.config.server.port = options.port
      if (options.host !== undefined) loaded.config.server.host = options.host
    },
  })
  const { app, gateway, logger } = booted
  const { server, issuer } = gateway.current().config
  let admin: Awaited<ReturnType<typeof startAdminListener>>
  // A worker of `server.workers` > 1 opens no admin listener: the primary serves it and asks the workers over IPC
  // (answering before the worker listens, so the primary never asks a worker that cannot answer yet).
  const stopAnswering = cluster.isWorker ? answerPrimaryAdmin(booted) : undefined
  try {
    await app.listen({ port: server.port, host: server.host })
    // The admin port is taken (another gateway on this host?): do not run half-observable.
    admin = cluster.isWorker ? undefined : await startAdminListener(booted)
  } catch (error) {
    await booted.close()
    throw error
  }
  const listening = app.server.address() as AddressInfo
  const mismatch = issuerMismatch(issuer.issuer, server.host, listening.port)
  if (mismatch !== undefined) logger.warn({ issuer: issuer.issuer, listening_port: listening.port }, mismatch)

  let stopping = false
  const reload = (): void => { if (!stopping) void gateway.reload() }
  // A worker of `server.workers` > 1 reloads when its primary says so; only the primary polls the file.
  const stopWatching = cluster.isWorker ? followPrimary(reload) : watchConfigFile(options.file, reload)
  // Stays registered during the drain (then ignored): without a listener, SIGHUP's default action kills the process.
  process.on('SIGHUP', reload)

  handleShutdownSignals({
    logger,
    graceMs: server.shutdown_grace_ms,
    drain: async () => {
      stopping = true
      booted.readiness.markDraining()
      stopWatching()
      await booted.close()
      await admin?.close()
      stopAnswering?.()
    },
    abortConnections: () => app.server.closeAllConnections(),
    closeIdleConnections: () => app.server.closeIdleConnections(),
    flushLogs: booted.flushLogs,
  })
  return booted
}
