import type { FastifyBaseLogger } from 'fastify'
import { buildSnapshot } from './config/build-snapshot.js'
import { ConfigError } from './config/config-error.js'
import { loadConfigFile, type ConfigCatalog, type LoadedConfig } from './config/load-config.js'
import { restartRequiredChanges } from './config/restart-required.js'
import type { Snapshot } from './config/snapshot.js'
import type { SharedResources } from './pipeline/shared-resources.js'

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
  readonly catalog: ConfigCatalog
  readonly shared: SharedResources
  /** The config file, when the gateway was started from one (reloads re-read it). */
  readonly file: string | undefined
  current (): Snapshot
  reload (): Promise<ReloadResult>
  /** Swaps in an already-validated config (tests, and reloads). */
  apply (loaded: LoadedConfig): ReloadResult
}

export function createGateway (options: {
  loaded: LoadedConfig
  catalog: ConfigCatalog
  shared: SharedResources
  file?: string
  logger: FastifyBaseLogger
  /** Told the result of every reload (metrics count them). */
  onReload?: (result: ReloadResult) => void
  /**
   * Changes applied to every config read from the file, at boot and on each reload (`lanegate start --port/--host`),
   * so a reload compares like with like and does not report `server` as needing a restart.
   */
  adjust?: (loaded: LoadedConfig) => void
}): Gateway {
  const { catalog, shared, logger } = options
  let snapshot = buildSnapshot(options.loaded.config, 1, catalog, shared)
  let source = options.loaded.source
  let pending: Promise<ReloadResult> | undefined
  for (const w of options.loaded.warnings) logger.warn({ path: w.path, line: w.line }, `config warning: ${w.message}`)

  function apply (loaded: LoadedConfig): ReloadResult {
    if (loaded.source === source && loaded.source !== '') return { outcome: 'unchanged', version: snapshot.version }
    const next = buildSnapshot(loaded.config, snapshot.version + 1, catalog, shared)
    const restartRequired = restartRequiredChanges(snapshot.config, next.config)
    snapshot = next
    source = loaded.source
    for (const w of loaded.warnings) logger.warn({ path: w.path, line: w.line }, `config warning: ${w.message}`)
    if (restartRequired.length > 0) {
      logger.warn({ keys: restartRequired }, 'config reloaded; these changes take effect only after a restart')
    }
    logger.info({ version: next.version }, 'config reloaded')
    return { outcome: 'applied', version: next.version, restartRequired }
  }

  async function reloadOnce (): Promise<ReloadResult> {
    if (options.file === undefined) return { outcome: 'unchanged', version: snapshot.version }
    try {
      const loaded = await loadConfigFile(options.file, catalog)
      options.adjust?.(loaded)
      return apply(loaded)
    } catch (error) {
      const problems = error instanceof ConfigError ? error.problems : undefined
      logger.error({ problems, err: problems ? undefined : error }, 'config reload rejected; the running config stays')
      return { outcome: 'rejected', version: snapshot.version, error: error as Error }
    }
  }

  return {
    catalog,
    shared,
    file: options.file,
    current: () => snapshot,
    apply,
    // Reloads run one at a time; a reload asked for while one runs waits for it and then runs again.
    reload: async () => {
      while (pending !== undefined) await pending
      pending = reloadOnce()
      try {
        const result = await pending
        options.onReload?.(result)
        return result
      } finally {
        pending = undefined
      }
    },
  }
}
