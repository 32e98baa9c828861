import { unwatchFile, watchFile } from 'node:fs'
import type { Server as TlsServer } from 'node:tls'
import { stampOf, TlsFileError, type FileStamp } from '../config/tls-files.js'
import type { ServerTlsConfig } from '../config/types.js'
import { loadListenerTls, type ListenerTls } from './listener-tls.js'

interface RotationLogger {
  info (fields: object, message: string): void
  error (fields: object, message: string): void
}

export interface ListenerRotation {
  /** Loads the files again now (SIGHUP); a pair that does not load is logged and the running one kept. */
  reload (): void
  /** Stops watching the files. */
  stop (): void
}

/** Whether `stamp`'s file looks as it did when read (what the watch compares; a file gone counts as changed). */
function unchangedSince (stamp: FileStamp): boolean {
  try {
    const now = stampOf(stamp.file)
    return now.mtimeMs === stamp.mtimeMs && now.size === stamp.size && now.ino === stamp.ino
  } catch {
    return false
  }
}

/**
 * Rotates the listener's certificate without a restart: when `cert_file`, `key_file` or `client_ca_file` changes
 * (stat polled, like the config file: editors' rename-over-the-old-file saves break inotify), and on `reload()`,
 * the files are read again and handed to `server.setSecureContext`: new handshakes get the new pair, open
 * connections keep theirs and are not cut. A pair that does not load (unreadable, key not matching the
 * certificate, half-written) is logged and the running pair kept. Changes within `settleMs` of each other (the
 * certificate and the key written one after the other) are loaded once, after the last.
 *
 * `started` is the pair the server was created with, read before the watch begins (at validation): it is logged
 * (serial, not-after) and handed to `onLoaded` as it is, unless a file changed since it was read (its stamp
 * differs: a certificate renewed while the gateway was starting), when the files are loaded again at once.
 */
export function rotateListenerTls (server: TlsServer, tls: ServerTlsConfig, logger: RotationLogger, onLoaded: (loaded: ListenerTls) => void, options: { started?: ListenerTls, intervalMs?: number, settleMs?: number } = {}): ListenerRotation {
  const files = [tls.cert_file, tls.key_file, tls.client_ca_file].filter((file): file is string => file !== undefined)
  let timer: NodeJS.Timeout | undefined
  let serial: string | undefined

  function reload (): void {
    if (timer !== undefined) clearTimeout(timer)
    timer = undefined
    let loaded: ListenerTls
    try {
      loaded = loadListenerTls(tls)
    } catch (error) {
      const setting = error instanceof TlsFileError ? `server.tls.${error.field}` : undefined
      logger.error({ setting, err: error instanceof TlsFileError ? undefined : error }, `TLS certificate not rotated; the running pair stays: ${(error as Error).message}`)
      return
    }
    server.setSecureContext(loaded.context)
    announce(loaded)
  }

  function announce (loaded: ListenerTls): void {
    onLoaded(loaded)
    if (loaded.pair.serial !== serial) logger.info({ serial: loaded.pair.serial, not_after: loaded.pair.notAfter.toISOString() }, 'TLS certificate loaded for new connections')
    serial = loaded.pair.serial
  }

  const changed = (current: { mtimeMs: number, size: number, ino: number }, previous: { mtimeMs: number, size: number, ino: number }): void => {
    if (current.mtimeMs === previous.mtimeMs && current.size === previous.size && current.ino === previous.ino) return
    if (timer !== undefined) clearTimeout(timer)
    timer = setTimeout(reload, options.settleMs ?? 200)
    timer.unref()
  }
  for (const file of files) watchFile(file, { interval: options.intervalMs ?? 500, persistent: false }, changed)
  // The pair the server started with: announced as read, or loaded again if a file changed since.
  if (options.started !== undefined && options.started.stamps.every(unchangedSince)) announce(options.started)
  else reload()
  return {
    reload,
    stop () {
      if (timer !== undefined) clearTimeout(timer)
      for (const file of files) unwatchFile(file, changed)
    },
  }
}
