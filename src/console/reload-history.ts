import { changedPaths } from '../config/changed-paths.js'
import { ConfigError, formatProblem } from '../config/config-error.js'
import type { ReloadResult } from '../reload/live-config.js'

/** One load or reload of gateway.yaml, as the console's config view lists it. */
export interface ReloadRecord {
  /** ISO 8601 time it finished. */
  at: string
  /** `loaded` for the load at start. */
  outcome: 'loaded' | ReloadResult['outcome']
  /** The version served afterwards (unchanged by a rejected edit). */
  version: number
  /** A rejected edit: every problem as `lanegate validate` prints it (`file:line path: message`). */
  problems?: string[]
  /** Settings an applied reload changed that take effect only after a restart. */
  restart_required?: string[]
  /** What an applied reload changed: YAML paths (never values), the first `CHANGES_SHOWN`. */
  changed?: string[]
  /** How many more paths changed than `changed` lists. */
  changed_more?: number
}

/** How many changed paths a reload lists. */
const CHANGES_SHOWN = 8

/** How many reloads the console keeps (the newest). */
const KEPT = 50

/**
 * The gateway's loads and reloads, newest last: told each reload's result (boot.ts passes it with the metrics'
 * count), read by the console. A rejected edit keeps its problems in the words of `lanegate validate`.
 */
export class ReloadHistory {
  readonly #records: ReloadRecord[] = []
  /** The config served now, to name what the next applied reload changes. */
  #config: unknown

  constructor (readonly file: string | undefined, config?: unknown, now = new Date()) {
    this.#config = config
    this.#records.push({ at: now.toISOString(), outcome: 'loaded', version: 1 })
  }

  /** `config`: the config served after this reload (the same as before unless it was applied). */
  record (result: ReloadResult, config?: unknown, now = new Date()): void {
    const record: ReloadRecord = { at: now.toISOString(), outcome: result.outcome, version: result.version }
    if (result.outcome === 'applied' && result.restartRequired.length > 0) record.restart_required = result.restartRequired
    if (result.outcome === 'applied' && config !== undefined && this.#config !== undefined) {
      const changed = changedPaths(this.#config, config)
      record.changed = changed.slice(0, CHANGES_SHOWN)
      if (changed.length > CHANGES_SHOWN) record.changed_more = changed.length - CHANGES_SHOWN
    }
    if (config !== undefined) this.#config = config
    if (result.outcome === 'rejected') {
      const error = result.error
      record.problems = error instanceof ConfigError
        ? error.problems.map((p) => formatProblem(this.file ?? error.file, p))
        : [error.message]
    }
    this.#records.push(record)
    if (this.#records.length > KEPT) this.#records.splice(0, this.#records.length - KEPT)
  }

  /** Newest first. */
  list (): ReloadRecord[] {
    return [...this.#records].reverse()
  }
}
