import cluster from 'node:cluster'
import closeWithGrace from 'close-with-grace'
import { bootGateway, type Booted } from './boot.js'
import { followPrimary } from './cluster/worker.js'
import { watchConfigFile } from './config/watch-config.js'

export interface StartOptions {
  file: string
  /** Overrides server.port. */
  port?: number
  /** Overrides server.host. */
  host?: string
}

/**
 * `lanegate start`: boot, listen, reload on file change or SIGHUP, and on SIGTERM/SIGINT stop accepting,
 * let in-flight requests finish (up to server.shutdown_grace_ms; new requests get 503), then close the stores.
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

  const reload = (): void => { void gateway.reload() }
  // A worker of `server.workers` > 1 reloads when its primary says so; only the primary polls the file.
  const stopWatching = cluster.isWorker ? followPrimary(reload) : watchConfigFile(options.file, reload)
  process.on('SIGHUP', reload)

  // close-with-grace shuts down on SIGHUP too by default; here SIGHUP means "reload the config" (above).
  closeWithGrace({ delay: server.shutdown_grace_ms + 1000, logger, skip: ['SIGHUP'] }, async function shutdown ({ signal, err }) {
    if (err) logger.error({ err }, 'shutting down after an error')
    else logger.info({ signal }, 'shutting down: finishing in-flight requests')
    stopWatching()
    process.off('SIGHUP', reload)
    await booted.close()
  })
  return booted
}
