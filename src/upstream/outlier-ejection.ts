import { recordEjection } from '../observability/recorders.js'
import { OutlierCounts, type OutlierEjectionSettings } from './outlier-counts.js'
import type { Target } from './target.js'

export type { OutlierEjectionSettings } from './outlier-counts.js'

/** What the ejector needs of its upstream. */
interface Owner {
  readonly name: string
  readonly targets: readonly Target[]
  readonly logger?: { warn (object: Record<string, unknown>, message: string): void }
}

/**
 * Outlier ejection for an upstream with several targets (Envoy's failure-percentage detection, compared with the
 * siblings rather than a fixed bar): every `interval_seconds` each target with at least `min_requests` answers is
 * compared with the others that had as many; one whose failure rate is `above_siblings_percent` points or more
 * above theirs (their failures over their answers) is ejected for `eject_seconds`, worst first, while fewer than
 * `max_ejected_percent` of the targets are ejected. Counts start again every interval. Each process judges its
 * own traffic (with `server.workers` every worker has its own counts).
 */
export class OutlierEjector {
  private readonly timer: NodeJS.Timeout
  private readonly failing = new Uint8Array(600)

  constructor (readonly settings: OutlierEjectionSettings, private readonly owner: Owner, private readonly now: () => number = Date.now) {
    for (const status of settings.failure_statuses) this.failing[status] = 1
    this.timer = setInterval(() => { this.evaluate() }, settings.interval_seconds * 1000).unref()
  }

  /** Gives each target counts to fill (a reload's new targets included). */
  attach (targets: readonly Target[]): void {
    for (const target of targets) target.outcomes ??= new OutlierCounts(this.failing)
  }

  /** One comparison round (the timer's; tests call it directly). Returns the URLs it ejected. */
  evaluate (): string[] {
    const targets = this.owner.targets
    const now = this.now()
    const judged = targets.filter((target) => (target.outcomes?.total ?? 0) >= this.settings.min_requests)
    const allowed = Math.max(1, Math.floor(targets.length * this.settings.max_ejected_percent / 100))
    let ejected = targets.filter((target) => target.outlierUntil > now).length
    const ejectedNow: string[] = []
    const rate = (failed: number, total: number): number => total === 0 ? 0 : failed * 100 / total
    const candidates = judged
      .map((target) => {
        const counts = target.outcomes as OutlierCounts
        let failed = 0
        let total = 0
        for (const other of judged) {
          if (other === target) continue
          failed += (other.outcomes as OutlierCounts).failed
          total += (other.outcomes as OutlierCounts).total
        }
        return { target, own: rate(counts.failed, counts.total), siblings: rate(failed, total), siblingCount: judged.length - 1 }
      })
      .filter((c) => c.siblingCount > 0 && c.target.outlierUntil <= now && c.own - c.siblings >= this.settings.above_siblings_percent)
      .sort((x, y) => (y.own - y.siblings) - (x.own - x.siblings))
    for (const c of candidates) {
      if (ejected >= allowed) break
      ejected++
      c.target.outlierUntil = now + this.settings.eject_seconds * 1000
      ejectedNow.push(c.target.url)
      recordEjection(this.owner.name, c.target.url, 'outlier')
      this.owner.logger?.warn({
        upstream: this.owner.name,
        upstream_target: c.target.url,
        failure_percent: Math.round(c.own),
        siblings_failure_percent: Math.round(c.siblings),
        eject_seconds: this.settings.eject_seconds,
      }, 'upstream target ejected as an outlier')
    }
    for (const target of targets) {
      if (target.outcomes !== undefined) {
        target.outcomes.total = 0
        target.outcomes.failed = 0
      }
    }
    return ejectedNow
  }

  stop (targets: readonly Target[]): void {
    clearInterval(this.timer)
    for (const target of targets) {
      target.outcomes = undefined
      target.outlierUntil = 0
    }
  }
}
