/** What /readyz answers: ready, or the checks that failed and why. */
export interface ReadinessReport {
  ready: boolean
  /** Every check by name: `ok`, or why it failed. */
  checks: Record<string, string>
  /** The names of the checks that failed (empty when ready). */
  failed: string[]
  /** With `server.workers` > 1 (answered by the primary): each worker's own report. */
  workers?: WorkerReadiness[]
  /** Following the config store: the version applied, its hash, whether the store answers (it decides nothing). */
  config?: Record<string, unknown>
}

/** One worker's readiness as the primary's /readyz lists it: the single process's body plus which worker. */
export interface WorkerReadiness {
  /** The worker's node:cluster id (1, 2, …; a restarted worker gets the next id). */
  worker: number
  pid: number
  status: 'ready' | 'not_ready'
  /** The worker's checks; `{ worker: why }` when it is still starting or did not answer. */
  checks: Record<string, string>
  failed: string[]
  /** The worker's `config` (following the config store). */
  config?: Record<string, unknown>
}

/** One named check: resolves when the dependency is usable, rejects (or throws) when it is not. */
export type ReadinessCheck = () => Promise<void> | void

/** A check that has not answered by then has failed: a probe must answer well within a load balancer's timeout. */
const CHECK_TIMEOUT_MS = 1_000

/**
 * The gateway's readiness: ready while every check passes (config loaded, signing keys loaded, the database
 * answers, Redis answers where the config uses it) and the gateway is not draining. `markDraining()` is the one
 * call a shutdown makes at its start: from then on /readyz answers 503, so load balancers stop sending new
 * requests while the in-flight ones finish.
 */
export class Readiness {
  #draining = false
  #config: (() => Record<string, unknown>) | undefined

  constructor (private readonly checks: Readonly<Record<string, ReadinessCheck>>, private readonly dependencyNames: readonly string[] = []) {}

  /** The shutdown has started: not ready from now on. */
  markDraining (): void {
    this.#draining = true
  }

  /** Adds `config` to every report from now on (the config store's applied version): shown, never a check. */
  describeConfig (config: () => Record<string, unknown>): void {
    this.#config = config
  }

  get draining (): boolean {
    return this.#draining
  }

  /** Runs every check at once (each bounded by a timeout) and reports. */
  async report (): Promise<ReadinessReport> {
    const names = Object.keys(this.checks)
    const results = await Promise.all(names.map((name) => runCheck(this.checks[name] as ReadinessCheck)))
    const checks: Record<string, string> = {}
    const failed: string[] = []
    names.forEach((name, i) => {
      const problem = results[i]
      checks[name] = problem ?? 'ok'
      if (problem !== undefined) failed.push(name)
    })
    if (this.#draining) {
      checks.draining = 'shutting down: finishing in-flight requests'
      failed.push('draining')
    }
    const report: ReadinessReport = { ready: failed.length === 0, checks, failed }
    if (this.#config !== undefined) report.config = this.#config()
    return report
  }

  /** The dependencies' state (database, redis) for `lanegate_dependency_up`. */
  async dependencies (): Promise<Record<string, boolean>> {
    const names = this.dependencyNames.filter((name) => this.checks[name] !== undefined)
    const results = await Promise.all(names.map((name) => runCheck(this.checks[name] as ReadinessCheck)))
    return Object.fromEntries(names.map((name, i) => [name, results[i] === undefined]))
  }
}

/** Undefined when the check passed, else a short reason (never a connection string: only the error's message). */
async function runCheck (check: ReadinessCheck): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<string>((resolve) => {
    timer = setTimeout(() => { resolve(`no answer within ${CHECK_TIMEOUT_MS} ms`) }, CHECK_TIMEOUT_MS)
  })
  try {
    return await Promise.race([Promise.resolve().then(check).then(() => undefined), timeout])
  } catch (error) {
    return error instanceof Error && error.message !== '' ? error.message : 'failed'
  } finally {
    clearTimeout(timer)
  }
}
