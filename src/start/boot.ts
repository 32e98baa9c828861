import { mkdir } from 'node:fs/promises'
import { resolve } from 'node:path'
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import { buildApp } from './app.js'
import { loadGatewayConfig, parseGatewayConfig, type LoadedGatewayConfig } from '../config/second-pass/load-gateway-config.js'
import { catalog as builtIn, type Catalog } from '../pipeline/registry.js'
import { createGateway, type Gateway } from '../reload/live-config.js'
import { stdoutDestination } from '../logging/log-destination.js'
import { createLogger, warnOfDroppedLines } from '../logging/logger.js'
import { openSharedResources } from './open-shared-resources.js'
import { adminSettings } from '../observability/admin-settings.js'
import { GatewayMetrics } from '../observability/metrics.js'
import { Readiness } from '../observability/readiness.js'
import { useMetrics } from '../observability/recorders.js'
import { ReloadHistory } from '../console/reload-history.js'
import { startingListenerTls, type ListenerTls } from '../tls/listener-tls.js'

export interface BootOptions {
  /** Config file to load (and to re-read on reload). */
  file?: string
  /**
   * The config already read from `file` and validated, with the same `adjust` (`lanegate start`, which read it to
   * learn `server.workers`): booted as it is, not read and validated again.
   */
  loaded?: LoadedGatewayConfig
  /** Config text instead of a file (tests). */
  text?: string
  env?: NodeJS.ProcessEnv
  /** Logger to use; default: pino at the config's log level on stdout. */
  logger?: Logger
  /** Changes applied to the parsed config before use (tests: data_dir, ports). */
  adjust?: (loaded: Pick<LoadedGatewayConfig, 'config'>) => void
  /** Policies and services to validate and serve with; default the built-in ones (tests add their own). */
  catalog?: Catalog
}

export interface Booted {
  app: FastifyInstance
  gateway: Gateway
  logger: Logger
  /** The gateway's metrics; undefined with `admin: false` (nothing is collected). */
  metrics: GatewayMetrics | undefined
  /** The loads and reloads of the config file, for the console (recorded while metrics are on). */
  reloads: ReloadHistory
  /** What /readyz reports; the shutdown calls `readiness.markDraining()` first. */
  readiness: Readiness
  /** With `server.tls`: the pair the listener started with, as validation read it (the rotation starts from it). */
  listenerTls: ListenerTls | undefined
  /** Closes the app (waiting for in-flight requests), then the shared resources. */
  close (): Promise<void>
  /** Waits (at most `timeoutMs`) for buffered log lines to be written; immediate with a logger passed in. */
  flushLogs (timeoutMs: number): Promise<void>
}

/** Loads the config, opens the shared resources, builds the gateway and its app. Does not listen. */
export async function bootGateway (options: BootOptions): Promise<Booted> {
  const env = options.env ?? process.env
  // `adjust` runs inside the loader, before the config is frozen.
  const loaded = options.loaded ?? (options.text !== undefined
    ? await parseGatewayConfig(options.text, options.file ?? 'gateway.yaml', { env, adjust: options.adjust }, options.catalog ?? builtIn)
    : await loadGatewayConfig(options.file ?? 'gateway.yaml', { env, adjust: options.adjust }, options.catalog ?? builtIn))
  const config = loaded.config
  const destination = options.logger === undefined ? stdoutDestination() : undefined
  const logger = options.logger ?? createLogger(config.server.log_level, destination)
  if (destination !== undefined) warnOfDroppedLines(logger, destination)
  await mkdir(resolve(config.server.data_dir), { recursive: true })
  const shared = await openSharedResources(config, logger as FastifyBaseLogger)
  let app: FastifyInstance
  let gateway: Gateway | undefined
  const readiness = new Readiness({
    config: () => { if (gateway?.current() === undefined) throw new Error('no config snapshot loaded') },
    keys: () => { if (shared.keys.jwks().keys.length === 0) throw new Error('no signing key loaded') },
    ...shared.dependencyChecks,
  }, Object.keys(shared.dependencyChecks))
  const metrics = adminSettings(config) === undefined
    ? undefined
    : new GatewayMetrics({
      configVersion: () => gateway?.current().version ?? 0,
      dependencies: () => readiness.dependencies(),
      upstreamTargets: () => shared.upstreams.proxies.targetCounts(),
      upstreamCircuits: () => [...shared.upstreams.proxies.circuitStates(), ...shared.upstreams.lanes.circuitStates()],
      logLinesDropped: () => destination?.dropped ?? 0,
    })
  const reloads = new ReloadHistory(options.text === undefined ? options.file : undefined, config)
  let listenerTls: ListenerTls | undefined
  try {
    // The listener's files as validation read them: not read a second time for the listener (nor a third for its rotation).
    listenerTls = config.server.tls === undefined ? undefined : startingListenerTls(config.server.tls, loaded.listenerTls)
    gateway = createGateway({
      loaded,
      shared,
      file: options.text === undefined ? options.file : undefined,
      logger: logger as FastifyBaseLogger,
      adjust: options.adjust,
      onReload: metrics === undefined ? undefined : (result) => { metrics.configReloads.inc(result.outcome); reloads.record(result, gateway?.current().config) },
    })
    app = await buildApp(gateway, logger, metrics, listenerTls)
    await app.ready()
  } catch (error) {
    await shared.close()
    throw error
  }
  useMetrics(metrics)
  return {
    app,
    gateway,
    logger,
    metrics,
    reloads,
    readiness,
    listenerTls,
    close: async () => {
      await app.close()
      await shared.close()
    },
    flushLogs: (timeoutMs) => destination?.flush(timeoutMs) ?? Promise.resolve(),
  }
}
