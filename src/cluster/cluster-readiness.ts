import type { Worker } from 'node:cluster'
import type { ReadinessReport, WorkerReadiness } from '../observability/readiness.js'
import { askWorkers } from './ask-workers.js'
import type { WorkerRoster } from './worker-roster.js'

/**
 * How long /readyz waits for a worker's report. Each worker's checks are bounded at 1 s (readiness.ts); a
 * worker that has not answered within this is counted not ready rather than holding up the probe.
 */
export const READINESS_ANSWER_MS = 1_500

const DRAINING = 'shutting down: finishing in-flight requests'

/**
 * `/readyz` of the primary with `server.workers` > 1: ready only when every configured worker is alive, serves
 * and reports itself ready, and the primary is not draining. The body keeps the single process's shape
 * (`status`, `checks`, `failed`) with the checks merged over the workers — a check is `ok` when every worker
 * says so, else each failing worker's reason prefixed by `worker <id>` — plus `workers`: the check `workers`
 * (every configured worker serves and answered) and `workers`, each worker's own report with its cluster id and
 * pid.
 */
export class ClusterReadiness {
  #draining = false

  constructor (private readonly roster: WorkerRoster) {}

  /** The primary's shutdown has started: not ready from now on, whatever the workers say. */
  markDraining (): void {
    this.#draining = true
  }

  async report (): Promise<ReadinessReport> {
    const entries = this.roster.entries()
    const answers = await askWorkers(entries.filter((e) => e.serving).map((e) => e.worker), 'readiness', READINESS_ANSWER_MS)
    const byId = new Map(answers.map((a) => [a.worker.id, a]))
    const workers: WorkerReadiness[] = []
    const problems: string[] = []
    for (const { worker, serving } of entries) {
      const answer = byId.get(worker.id)
      const report = answer?.answered === true && isReport(answer.value) ? answer.value : undefined
      const pid = worker.process.pid ?? 0
      if (report !== undefined) {
        workers.push({ worker: worker.id, pid, status: report.ready ? 'ready' : 'not_ready', checks: report.checks, failed: report.failed, ...report.config === undefined ? {} : { config: report.config } })
        continue
      }
      const why = whyNoReport(worker, serving, answer?.answered === true)
      problems.push(`worker ${worker.id} (pid ${pid}): ${why}`)
      workers.push({ worker: worker.id, pid, status: 'not_ready', checks: { worker: why }, failed: ['worker'] })
    }
    const missing = this.roster.configured - entries.length
    if (missing > 0) problems.push(`${missing} of ${this.roster.configured} workers not running`)

    const checks: Record<string, string> = {}
    const reasons = new Map<string, string[]>()
    for (const entry of workers) {
      if (entry.failed.includes('worker')) continue
      for (const [name, value] of Object.entries(entry.checks)) {
        const list = reasons.get(name) ?? []
        if (value !== 'ok') list.push(`worker ${entry.worker}: ${value}`)
        reasons.set(name, list)
      }
    }
    for (const [name, list] of reasons) checks[name] = list.length === 0 ? 'ok' : list.join('; ')
    checks.workers = problems.length === 0 ? 'ok' : problems.join('; ')
    if (this.#draining) checks.draining = DRAINING
    const failed = Object.keys(checks).filter((name) => checks[name] !== 'ok')
    return { ready: failed.length === 0, checks, failed, workers }
  }
}

/** Why a worker gave no report: it died, is closing its IPC channel, is still booting, failed or stayed silent. */
function whyNoReport (worker: Worker, serving: boolean, answered: boolean): string {
  if (worker.isDead()) return 'exited'
  if (!worker.isConnected()) return 'exiting'
  if (!serving) return 'starting'
  return answered ? 'could not report' : `no answer within ${READINESS_ANSWER_MS} ms`
}

function isReport (value: unknown): value is ReadinessReport {
  if (typeof value !== 'object' || value === null) return false
  const report = value as Partial<ReadinessReport>
  return typeof report.ready === 'boolean' && typeof report.checks === 'object' && report.checks !== null && Array.isArray(report.failed)
}
