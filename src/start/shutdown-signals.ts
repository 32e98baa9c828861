import type { Logger } from 'pino'

export interface ShutdownOptions {
  logger: Logger
  /** server.shutdown_grace_ms: how long in-flight requests may finish. */
  graceMs: number
  /** Stops accepting, waits for in-flight requests, closes the stores. */
  drain (): Promise<void>
  /** Called once the grace period is over and the drain still runs: close every connection, in flight or not. */
  abortConnections (): void
  /**
   * Closes the connections that carry no request now. Called every IDLE_SWEEP_MS while draining: a keep-alive
   * connection whose request finished during the drain would otherwise stay open (and hold the drain) until the
   * client or the keep-alive timeout closed it, or the grace period ended.
   */
  closeIdleConnections?: () => void
  /** Writes out buffered log lines, waiting at most `timeoutMs`. */
  flushLogs (timeoutMs: number): Promise<void>
  /** Ends the process (tests pass their own). */
  exit?: (code: number) => void
}

/** After the grace period, how long closing the stores may still take before the process exits anyway. */
export const SHUTDOWN_MARGIN_MS = 1_000

/** While draining, how often connections that went idle are closed. */
export const IDLE_SWEEP_MS = 100

const STOP_SIGNALS = ['SIGTERM', 'SIGINT'] as const

/**
 * SIGTERM/SIGINT (and an uncaught error) drain the gateway, bounded: in-flight requests get `graceMs`; then every
 * connection is closed; `SHUTDOWN_MARGIN_MS` later the process exits whatever the stores, sockets or the log pipe
 * are doing. A second signal exits at once. SIGHUP is not a stop signal here (it reloads, see server.ts): this
 * replaces close-with-grace, which always treats SIGHUP as a shutdown and whose deadline could not fire while a
 * synchronous log write to a full stdout pipe blocked the event loop (logs are now asynchronous, see
 * log-destination.ts). Returns a function that removes the handlers.
 */
export function handleShutdownSignals (options: ShutdownOptions): () => void {
  const { logger, graceMs } = options
  const exit = options.exit ?? ((code: number) => process.exit(code))
  let stopping = false

  function shutdown (reason: { signal?: string, err?: unknown }): void {
    if (stopping) {
      logger.warn({ signal: reason.signal }, 'second stop signal (or an error while stopping): exiting now')
      exit(1)
      return
    }
    stopping = true
    const exitCode = reason.err === undefined ? 0 : 1
    if (reason.err !== undefined) logger.error({ err: reason.err }, 'shutting down after an error')
    else logger.info({ signal: reason.signal }, 'shutting down: finishing in-flight requests')
    const started = Date.now()
    // unref: they must not keep an otherwise finished process alive, yet they fire while anything else does.
    setTimeout(function graceOver () {
      logger.warn({ grace_ms: graceMs }, 'shutdown grace period over: closing the remaining connections')
      options.abortConnections()
    }, graceMs).unref()
    setTimeout(function deadline () {
      logger.error('shutdown did not finish within the grace period and margin: exiting')
      exit(1)
    }, graceMs + SHUTDOWN_MARGIN_MS).unref()
    const sweep = options.closeIdleConnections === undefined ? undefined : setInterval(options.closeIdleConnections, IDLE_SWEEP_MS).unref()
    options.drain().finally(() => clearInterval(sweep)).then(() => exitCode, (error: unknown) => {
      logger.error({ err: error }, 'error while shutting down')
      return 1
    }).then(async (code) => {
      logger.info('stopped')
      const left = graceMs + SHUTDOWN_MARGIN_MS - (Date.now() - started)
      await options.flushLogs(Math.max(0, Math.min(left, 500)))
      exit(code)
    }, () => exit(1))
  }

  const onSignal = (signal: NodeJS.Signals): void => shutdown({ signal })
  const onError = (err: unknown): void => shutdown({ err })
  for (const signal of STOP_SIGNALS) process.on(signal, onSignal)
  process.on('uncaughtException', onError)
  process.on('unhandledRejection', onError)
  return function removeShutdownHandlers () {
    for (const signal of STOP_SIGNALS) process.off(signal, onSignal)
    process.off('uncaughtException', onError)
    process.off('unhandledRejection', onError)
  }
}
