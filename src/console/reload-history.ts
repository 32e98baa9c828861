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
}

/** How many reloads the console keeps (the newest). */
const KEPT = 50

/**
 * The gateway's loads and reloads, newest last: told each reload's result (boot.ts passes it with the metrics'
 * count), read by the console. A rejected edit keeps its problems in the words of `lanegate validate`.
 */
export class ReloadHistory {
  readonly #records: ReloadRecord[] = []

  constructor (readonly file: string | undefined, now = new Date()) {
    this.#records.push({ at: now.toISOString(), outcome: 'loaded', version: 1 })
  }

  record (result: ReloadResult, now = new Date()): void {
    const record: ReloadRecord = { at: now.toISOString(), outcome: result.outcome, version: result.version }
    if (result.outcome === 'applied' && result.restartRequired.length > 0) record.restart_required = result.restartRequired
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
