import { AggregatorRegistry, collectDefaultMetrics, Counter, Gauge, Registry, type Aggregator, type MetricObjectWithValues, type MetricValue } from 'prom-client'
import { askWorkers } from './ask-workers.js'
import type { WorkerRoster } from './worker-roster.js'

/** How long a scrape waits for a worker's registry (its dependency checks take up to 1 s of that). */
export const METRICS_ANSWER_MS = 3_000

type MetricSet = MetricObjectWithValues<MetricValue<string>>[]

/**
 * Aggregations that differ from what prom-client's defaults declare: `process_max_fds` is each process's own
 * limit (the same in every worker), so a sum would name a limit no process has; prom-client omits
 * `process_start_time_seconds` in a cluster, the latest worker start is kept instead (it moves on every worker
 * restart). The gateway's own families declare theirs where they are defined (metrics.ts, series.ts).
 */
const AGGREGATOR_OVERRIDES: Readonly<Record<string, Aggregator>> = {
  process_max_fds: 'min',
  process_start_time_seconds: 'max',
}

/** Counters and histograms only ever grow: those are the families a worker's last answer keeps contributing. */
function isCumulative (metric: { type: unknown }): boolean {
  return metric.type === 'counter' || metric.type === 'histogram'
}

/**
 * `/metrics` of the primary with `server.workers` > 1: one scrape reports the whole gateway. Each serving worker
 * is asked over IPC for its registry (prom-client's JSON) and the sets are merged with prom-client's
 * `AggregatorRegistry.aggregate`, family by family with each family's aggregator: counters and histograms are
 * summed, `lanegate_config_version` is the max, `lanegate_dependency_up` the min. The primary adds its own
 * process and Node.js metrics under `process="primary"` (it counts the memory-driver rate limits of every
 * worker, so its CPU matters) and `lanegate_workers{state}`.
 *
 * Counters stay monotonic across worker trouble, so Prometheus does not read a false counter reset:
 * - a worker that does not answer in time (or dies during the scrape) is counted with its last answer's
 *   counters and histograms (its gauges are left out of that scrape);
 * - a worker that exits leaves its last answer's counters and histograms to a retired set that every later scrape
 *   adds; only what it counted between its last scrape and its death is lost. Its replacement starts at 0.
 */
export class ClusterMetrics {
  readonly #own = new Registry()
  readonly #last = new Map<number, MetricSet>()
  #retired: MetricSet = []
  #answered = 0

  /** `logLinesDropped`: the primary's own dropped log lines, added to the workers' `lanegate_log_lines_dropped_total`. */
  constructor (private readonly roster: WorkerRoster, logLinesDropped: () => number = () => 0) {
    collectDefaultMetrics({ register: this.#own, labels: { process: 'primary' } })
    const metrics = this
    new Counter({
      name: 'lanegate_log_lines_dropped_total',
      help: 'Log lines dropped because the log destination (stdout) was backed up (its reader lagged).',
      registers: [this.#own],
      collect () {
        this.reset()
        this.inc(logLinesDropped())
      },
    })
    new Gauge({
      name: 'lanegate_workers',
      help: 'Worker processes: configured (server.workers), serving, and answered (whose counts this scrape read fresh).',
      labelNames: ['state'],
      registers: [this.#own],
      collect () {
        this.set({ state: 'configured' }, roster.configured)
        this.set({ state: 'serving' }, roster.serving().length)
        this.set({ state: 'answered' }, metrics.#answered)
      },
    })
  }

  /** A worker exited: its last counts stay in every later sum (called on the cluster's `exit` event). */
  retire (workerId: number): void {
    const last = this.#last.get(workerId)
    this.#last.delete(workerId)
    if (last !== undefined) this.#retired = aggregate([this.#retired, last.filter(isCumulative)])
  }

  /** The whole gateway's metrics in the Prometheus text format. */
  async text (): Promise<string> {
    const answers = await askWorkers(this.roster.serving(), 'metrics', METRICS_ANSWER_MS)
    const sets: MetricSet[] = []
    let answered = 0
    for (const { worker, answered: fresh, value } of answers) {
      // Exited since it answered: retire() already kept its previous answer; this one would count it twice.
      if (worker.isDead()) continue
      if (fresh && Array.isArray(value)) {
        answered++
        this.#last.set(worker.id, value as MetricSet)
        sets.push(value as MetricSet)
      } else {
        const last = this.#last.get(worker.id)
        if (last !== undefined) sets.push(last.filter(isCumulative))
      }
    }
    this.#answered = answered
    sets.push(this.#retired, await this.#own.getMetricsAsJSON())
    return AggregatorRegistry.aggregate(sets.map(withOverrides)).metrics()
  }

  /** The content type of the text format. */
  get contentType (): string {
    return this.#own.contentType
  }
}

/** Merges sets family by family (prom-client's aggregation), synchronously: the result's metrics carry their values. */
function aggregate (sets: MetricSet[]): MetricSet {
  // Cast: prom-client types getMetricsAsArray as Metric[] though after aggregate() they carry their values (MetricSet).
  return AggregatorRegistry.aggregate(sets.map(withOverrides)).getMetricsAsArray() as unknown as MetricSet
}

function withOverrides (set: MetricSet): MetricSet {
  return set.map((metric) => {
    const aggregator = AGGREGATOR_OVERRIDES[metric.name]
    return aggregator === undefined ? metric : { ...metric, aggregator }
  })
}
