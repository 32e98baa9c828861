import { unwatchFile, watchFile } from 'node:fs'
import { rootCertificates, type ConnectionOptions } from 'node:tls'
import { buildConnector } from 'undici'
import { loadCertificatePair, readCaBundle } from '../config/tls-files.js'
import type { BackendTlsConfig } from '../config/types.js'
import { noteSocketError } from './tls-alerts.js'

interface ConnectorLogger {
  error? (fields: Record<string, unknown>, message: string): void
  warn (fields: Record<string, unknown>, message: string): void
  info (fields: Record<string, unknown>, message: string): void
}

function logError (logger: ConnectorLogger | undefined, message: string): void {
  if (logger?.error !== undefined) logger.error({}, message)
  else logger?.warn({}, message)
}

/**
 * An upstream's `tls:` settings as loaded, or `{}` for an https target without them (the system's CAs, the
 * certificate verified): what the schema fills in is read as `only_ca === true` and `verify !== false`.
 */
export type BackendTlsSettings = Partial<BackendTlsConfig>

/** What `tls.connect` needs to reach a backend: the only place an upstream's `tls:` settings become options. */
export type BackendTlsOptions = Pick<ConnectionOptions, 'ca' | 'cert' | 'key' | 'servername' | 'rejectUnauthorized'>

/**
 * `tls.connect` options of an upstream's `tls:` settings, its files read now: the CA file trusted beside the
 * system's (or alone, `only_ca`), the client certificate, the `servername` (SNI and the name checked) and
 * `verify: false`. Throws when a file does not load. undici's connector (below) and the WebSocket relay's own
 * connection (`connectOptions`, websocket-connect.ts) are both made from these.
 */
function backendTlsOptions (tls: BackendTlsSettings): BackendTlsOptions {
  const ca = tls.ca_file === undefined ? undefined : readCaBundle(tls.ca_file)
  const pair = tls.cert_file !== undefined && tls.key_file !== undefined ? loadCertificatePair(tls.cert_file, tls.key_file) : undefined
  return {
    ca: ca === undefined ? undefined : tls.only_ca === true ? ca : [...rootCertificates, ca.toString('latin1')],
    cert: pair?.cert,
    key: pair?.key,
    servername: tls.servername,
    rejectUnauthorized: tls.verify !== false,
  }
}

/**
 * The connector of every https target's pool, with the upstream's `tls:` settings when it has some (a proxy block's `upstream.tls`, a
 * lane's `lane.tls`): the CA file trusted beside the system's (or alone, `only_ca`), a client certificate, the
 * `servername` sent as SNI and checked, and `verify: false` (no check: validation warns about it at every load).
 *
 * The files are re-read when they change (stat polled, as the listener's): new connections use the new files,
 * open keep-alive connections are not cut. Files that do not load (half-written, a key not matching) are logged
 * and the running connector kept. Files that do not load when the target is made (they passed validation a
 * moment before) fail each connection as `tls` until they do.
 */
export class BackendTlsConnector {
  /**
   * The connector of the files loaded last and the options it was made of (for connections made without undici),
   * or, while the files have never loaded, one that fails every connection and why.
   */
  private current: { connector: buildConnector.connector, options: BackendTlsOptions | Error }
  private readonly files: string[]
  private readonly changed = (current: { mtimeMs: number, ino: number, size: number }, previous: { mtimeMs: number, ino: number, size: number }): void => {
    if (current.mtimeMs === previous.mtimeMs && current.ino === previous.ino && current.size === previous.size) return
    try {
      this.current = this.build()
      this.logger?.info({ upstream_tls_files: this.files.length }, 'upstream TLS files reloaded for new connections')
    } catch (error) {
      logError(this.logger, `upstream TLS files not reloaded; the running ones stay: ${(error as Error).message}`)
    }
  }

  constructor (private readonly tls: BackendTlsSettings, private readonly timeoutMs: number, private readonly logger?: ConnectorLogger) {
    this.files = [tls.ca_file, tls.cert_file, tls.key_file].filter((file): file is string => file !== undefined)
    try {
      this.current = this.build()
    } catch (error) {
      const failure = Object.assign(new Error(`upstream TLS files do not load: ${(error as Error).message}`), { code: 'ERR_TLS_FILES' })
      logError(logger, failure.message)
      this.current = { connector: (_options, callback) => { queueMicrotask(() => callback(failure, null)) }, options: failure }
    }
    for (const file of this.files) watchFile(file, { interval: 1_000, persistent: false }, this.changed)
  }

  /** undici's `connect` option: each new connection of the pool goes through the connector loaded last. */
  readonly connect: buildConnector.connector = (options, callback) => {
    const servername = this.tls.servername
    this.current.connector(servername === undefined ? options : { ...options, servername }, (error, socket) => {
      // A TLS alert after the handshake (TLS 1.3 `certificate required`) is noted for failure.ts (tls-alerts.ts).
      if (socket !== null && socket !== undefined) socket.on('error', function noteTlsAlert (socketError) { noteSocketError(socket.localPort, socketError) })
      if (error !== null) callback(error, null)
      else callback(null, socket as NonNullable<typeof socket>)
    })
  }

  /**
   * The options of the files loaded last, for a connection the pool does not make (a WebSocket upgrade): the same
   * CA, client certificate, server name and verification as the pool's. Throws (code `ERR_TLS_FILES`, a `tls`
   * failure) while the files have never loaded.
   */
  connectOptions (): BackendTlsOptions {
    const { options } = this.current
    if (options instanceof Error) throw options
    return options
  }

  /** Stops watching the files (the target's pool is closing). */
  close (): void {
    for (const file of this.files) unwatchFile(file, this.changed)
  }

  /** Reads the files and makes a connector of them; throws when they do not load. */
  private build (): { connector: buildConnector.connector, options: BackendTlsOptions } {
    const options = backendTlsOptions(this.tls)
    return { connector: buildConnector({ timeout: this.timeoutMs, ...options }), options }
  }
}
