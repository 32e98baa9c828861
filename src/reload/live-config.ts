import type { FastifyBaseLogger } from 'fastify'
import { buildSnapshot } from '../pipeline/build-snapshot.js'
import { ConfigError } from '../config/config-error.js'
import { loadConfigFile, parseConfigText } from '../config/load-config.js'
import { configRules } from '../config/second-pass/config-rules.js'
import type { LoadedGatewayConfig } from '../config/second-pass/load-gateway-config.js'
import type { Catalog } from '../pipeline/registry.js'
import { reconcileServices } from '../services/service-module.js'
import { serviceRestartChanges } from '../services/mounted-routes.js'
import type { GatewayConfig } from '../config/types.js'
import { restartRequiredChanges } from '../config/restart-required.js'
import { listenerReloadProblems } from '../config/reload-listener-checks.js'
import type { Snapshot } from '../runtime/snapshot.js'
import type { SharedResources } from '../runtime/shared-resources.js'
import { declaredLanes } from '../upstream/declared-lanes.js'

export type ReloadResult =
  | { outcome: 'applied', version: number, restartRequired: string[] }
  | { outcome: 'unchanged', version: number }
  | { outcome: 'rejected', version: number, error: Error }

/**
 * The running gateway's state: the current config snapshot and the long-lived shared resources. `current()` is
 * what every request reads once, at its start; `reload()` builds a complete new snapshot and swaps it in one
 * assignment, or keeps the old one when the file is invalid.
 */
export interface Gateway {
  /** The policies (built-in and loaded from `plugins:` at start) and services this process knows. */
  readonly catalog: Catalog
  readonly shared: SharedResources
  /** The config file, when the gateway was started from one (reloads re-read it). */
  readonly file: string | undefined
  current (): Snapshot
  reload (): Promise<ReloadResult>
  /** Swaps in an already-validated config (tests, and reloads); `file` names it in a refusal. */
  apply (loaded: LoadedGatewayConfig, file?: string, label?: ReloadLabel): ReloadResult
  /**
   * Validates `text` (named `file` in its problems) as a reload of the file would be and applies it: one reload at a
   * time with the file's, told to `onReload` (metrics, the console's reload history). A config store's version.
   */
  applyText (text: string, file: string, label?: ReloadLabel): Promise<ReloadResult>
  /**
   * Calls `listener` with each snapshot swapped in from now on, right after the swap (before `apply` returns);
   * returns the function that stops it. What must follow a reload at once (open WebSockets rechecked) listens here
   * instead of polling `current()`.
   */
  onSwap (listener: (snapshot: Snapshot) => void): () => void
}

/** The outcome line of a reload of something else than the file (a config store's version): one line, its words. */
export interface ReloadLabel {
  /** Added to the outcome line. */
  fields: Record<string, unknown>
  applied: string
  rejected: (error: Error) => string
}

/** What the live config starts from, and whom it tells of reloads. */
export interface LiveConfigOptions {
  loaded: LoadedGatewayConfig
  shared: SharedResources
  file?: string
  logger: FastifyBaseLogger
  /** Told the result of every reload (metrics count them). */
  onReload?: (result: ReloadResult) => void
  /**
   * Changes applied to every config read from the file, at boot and on each reload (`lanegate start --port/--host`),
   * so a reload compares like with like and does not report `server` as needing a restart.
   */
  adjust?: (loaded: Pick<LoadedGatewayConfig, 'config'>) => void
}

/** The running gateway: its snapshot swapped in one assignment by `apply`, and reloads of its file one at a time. */
export function createGateway (options: LiveConfigOptions): Gateway {
  const { shared, logger } = options
  // Outside policies are imported once, at start; reloads validate against the same set (config-rules.ts).
  const catalog = options.loaded.catalog
  const reloadRules = configRules(catalog, { loadPlugins: false })
  let snapshot = buildSnapshot(options.loaded.config, 1, catalog, shared)
  // The app mounts every service's routes from the boot snapshot, once (app.ts): what a reload is compared with.
  const mounted = snapshot.config
  // Resources that follow the config (proxy blocks' upstreams and their health checks, lanes) start with the snapshot.
  reconcileConfigResources(catalog, shared, snapshot.config)
  let source = options.loaded.source
  const swapListeners = new Set<(snapshot: Snapshot) => void>()
  logWarnings(logger, options.loaded.warnings)
  for (const [name, origin] of catalog.origins ?? []) {
    logger.info({ plugin: name, file: origin.file, version: origin.version ?? 'unversioned' }, `policy plugin "${name}" loaded from ${origin.file} (${origin.version ?? 'unversioned'})`)
  }

  function apply (loaded: LoadedGatewayConfig, file = options.file ?? 'gateway.yaml', label?: ReloadLabel): ReloadResult {
    if (loaded.source === source && loaded.source !== '') {
      // Said out loud: an operator who sent SIGHUP (or saved the file unchanged) sees that it was read.
      logger.info({ ...label?.fields, version: snapshot.version }, `${label?.applied ?? 'config reload'}: no change (version ${snapshot.version} stays)`)
      return { outcome: 'unchanged', version: snapshot.version }
    }
    const refused = listenerReloadProblems(mounted, loaded.config)
    if (refused.length > 0) throw new ConfigError(file, refused)
    const next = buildSnapshot(loaded.config, snapshot.version + 1, catalog, shared)
    // Built and valid: bring the config's resources in line (removed proxy blocks and lanes drain) just before the swap.
    reconcileConfigResources(catalog, shared, next.config)
    const changes = [...restartRequiredChanges(mounted, snapshot.config, next.config), ...serviceRestartChanges(catalog.services, mounted, snapshot.config, next.config)]
    const restartRequired = changes.map((change) => change.key)
    snapshot = next
    source = loaded.source
    logWarnings(logger, loaded.warnings)
    if (restartRequired.length > 0) {
      const details = changes.map((change) => `${change.key} (${change.message})`).join('; ')
      logger.warn({ keys: restartRequired }, `config reloaded; these changes take effect only after a restart: ${details}`)
    }
    logger.info({ ...label?.fields, version: next.version }, label?.applied ?? 'config reloaded')
    announceSwap(swapListeners, next, logger)
    return { outcome: 'applied', version: next.version, restartRequired }
  }

  /** Loads a config with the reload rules and applies it, or keeps the running one; told to `onReload`. */
  async function reloadFrom (load: () => Promise<LoadedGatewayConfig>, file: string, label?: ReloadLabel): Promise<ReloadResult> {
    let result: ReloadResult
    try {
      result = apply(await load(), file, label)
    } catch (error) {
      const problems = error instanceof ConfigError ? error.problems : undefined
      logger.error({ ...label?.fields, problems, err: problems ? undefined : error }, label?.rejected(error as Error) ?? 'config reload rejected; the running config stays')
      result = { outcome: 'rejected', version: snapshot.version, error: error as Error }
    }
    options.onReload?.(result)
    return result
  }
  // Reloads run one at a time, the file's and a config store's: one asked for while another runs waits for it.
  const oneReloadAtATime = oneAtATime()

  return {
    catalog,
    shared,
    file: options.file,
    current: () => snapshot,
    apply,
    onSwap: (listener) => {
      swapListeners.add(listener)
      return () => { swapListeners.delete(listener) }
    },
    reload: async () => {
      const file = options.file
      if (file === undefined) return { outcome: 'unchanged', version: snapshot.version }
      return oneReloadAtATime(async () => reloadFrom(async () => loadConfigFile(file, reloadRules, { adjust: options.adjust }), file))
    },
    applyText: async (text, file, label) =>
      oneReloadAtATime(async () => reloadFrom(async () => parseConfigText(text, file, reloadRules, { adjust: options.adjust }), file, label)),
  }
}

/** The upstreams that follow the config: every module's (`proxy` blocks) and the stores' lanes. */
function reconcileConfigResources (catalog: Catalog, shared: SharedResources, config: GatewayConfig): void {
  reconcileServices(catalog.services, config, shared)
  shared.upstreams.lanes.reconcile(declaredLanes(config))
}

function logWarnings (logger: FastifyBaseLogger, warnings: LoadedGatewayConfig['warnings']): void {
  for (const w of warnings) logger.warn({ path: w.path, line: w.line }, `config warning: ${w.message}`)
}

/** The swap is done whatever a listener does: one that throws is logged, and the others still hear it. */
function announceSwap (listeners: ReadonlySet<(snapshot: Snapshot) => void>, next: Snapshot, logger: FastifyBaseLogger): void {
  for (const listener of listeners) {
    try {
      listener(next)
    } catch (error) {
      logger.error({ err: error, version: next.version }, 'a config swap listener failed')
    }
  }
}

/** Runs the functions given to it one at a time: one given while another runs waits for it, then runs. */
function oneAtATime (): <T>(run: () => Promise<T>) => Promise<T> {
  let pending: Promise<unknown> | undefined
  return async <T>(run: () => Promise<T>): Promise<T> => {
    while (pending !== undefined) await pending.catch(() => undefined)
    const current = run()
    pending = current
    try {
      return await current
    } finally {
      pending = undefined
    }
  }
}
