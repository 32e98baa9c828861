import cluster from 'node:cluster'
import closeWithGrace from 'close-with-grace'
import { bootGateway, type Booted } from './boot.js'
import { followPrimary } from './cluster/worker.js'
import { watchConfigFile } from './config/watch-config.js'
import { startAdminListener } from './observability/admin-listener.js'

export interface StartOptions {
  file: string
  /** Overrides server.port. */
  port?: number
  /** Overrides server.host. */
  host?: string
}

/**
 * `lanegate start`: boot, listen (and the admin listener), reload on file change or SIGHUP, and on
 * SIGTERM/SIGINT report not-ready, stop accepting, let in-flight requests finish (up to
 * server.shutdown_grace_ms; new requests get 503), then close the stores and the admin listener.
 */
export async function startServer (options: StartOptions): Promise<Booted> {
  const booted = await bootGateway({
    file: options.file,
    adjust: (loaded) => {
      if (options.port !== undefined) loaded.config.server.port = options.port
      if (options.host !== undefined) loaded.config.server.host = options.host
    },
  })
  const { app, gateway, logger } = booted
  const { server } = gateway.current().config
  await app.listen({ port: server.port, host: server.host })
  let admin: Awaited<ReturnType<typeof startAdminListener>>
  try {
    admin = await startAdminListener(booted)
  } catch (error) {
    // The admin port is taken (another gateway on this host?): do not run half-observable.
    await booted.close()
    throw error
  }

  const reload = (): void => { void gateway.reload() }
  // A worker of `server.workers` > 1 reloads when its primary says so; only the primary polls the file.
  const stopWatching = cluster.isWorker ? followPrimary(reload) : watchConfigFile(options.file, reload)
  process.on('SIGHUP', reload)

  closeWithGrace({ delay: server.shutdown_grace_ms + 1000, logger }, async function shutdown ({ signal, err }) {
    booted.readiness.markDraining()
    if (err) logger.error({ err }, 'shutting down after an error')
    else logger.info({ signal }, 'shutting down: finishing in-flight requests')
    stopWatching()
    process.off('SIGHUP', reload)
    await booted.close()
    await admin?.close()
  })
  return booted
}
