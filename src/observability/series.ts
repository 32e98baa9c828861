import type { Metric, MetricType } from 'prom-client'

/** One counter time series' value, incremented in place by whoever holds it. */
export interface CounterCell { value: number }

/** One histogram time series: counts per bucket (not cumulative), sum and count. */
export interface HistogramCell { readonly buckets: number[], sum: number, count: number }

interface Series<C> { readonly labels: Record<string, string>, readonly cell: C }

type Node<C> = Map<string, Node<C> | C>

/** What prom-client's Registry reads from a metric when it renders the text format. */
interface ExportedValue { labels: Record<string, string | number>, value: number, metricName?: string }

/**
 * A metric family whose series are plain objects found by nested Maps of label values. prom-client's own
 * `labels(...).inc()` hashes the label object on every call; here a caller on the hot path keeps its cell (found
 * once, e.g. per route) and increments a number, and the text is built only when /metrics is scraped. The
 * family implements the part of prom-client's metric interface its Registry uses (`name`, `help`, `type`, `get`).
 */
abstract class Family<C> {
  readonly aggregator = 'sum' as const
  readonly #root: Node<C> = new Map()
  protected readonly series: Series<C>[] = []
  #unlabelled: C | undefined

  constructor (readonly name: string, readonly help: string, readonly labelNames: readonly string[]) {}

  protected abstract make (): C

  /** The cell of these label values (in `labelNames` order), created on first use. */
  cell (...values: string[]): C {
    if (values.length === 0) {
      this.#unlabelled ??= this.add({})
      return this.#unlabelled
    }
    let node = this.#root
    const last = values.length - 1
    for (let i = 0; i < last; i++) {
      const key = values[i] as string
      let next = node.get(key) as Node<C> | undefined
      if (next === undefined) {
        next = new Map()
        node.set(key, next)
      }
      node = next
    }
    const found = node.get(values[last] as string) as C | undefined
    if (found !== undefined) return found
    const labels: Record<string, string> = {}
    this.labelNames.forEach((name, i) => { labels[name] = values[i] as string })
    const created = this.add(labels)
    node.set(values[last] as string, created)
    return created
  }

  /** Calls `visit` with every series' labels and cell (the console's once-a-second sampler; never per request). */
  each (visit: (labels: Readonly<Record<string, string>>, cell: C) => void): void {
    for (const { labels, cell } of this.series) visit(labels, cell)
  }

  private add (labels: Record<string, string>): C {
    const cell = this.make()
    this.series.push({ labels, cell })
    return cell
  }
}

/**
 * The type prom-client's Registry reads: its .d.ts declares MetricType a numeric enum (absent at run time) while
 * its code compares the strings 'counter', 'histogram'.
 */
function promType (name: 'counter' | 'histogram'): MetricType {
  return name as unknown as MetricType
}

/** A counter family (`_total` names are given in full). */
export class CounterFamily extends Family<CounterCell> {
  readonly type = promType('counter')

  protected make (): CounterCell { return { value: 0 } }

  /** Adds one to the series of these label values (not for the hot path: finds the cell each time). */
  inc (...values: string[]): void {
    this.cell(...values).value++
  }

  get (): { name: string, help: string, type: MetricType, values: ExportedValue[], aggregator: 'sum' } {
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      values: this.series.map((s) => ({ labels: s.labels, value: s.cell.value })),
      aggregator: this.aggregator,
    }
  }
}

/** A histogram family with fixed upper bounds in seconds. */
export class HistogramFamily extends Family<HistogramCell> {
  readonly type = promType('histogram')

  constructor (name: string, help: string, labelNames: readonly string[], readonly upperBounds: readonly number[]) {
    super(name, help, labelNames)
  }

  protected make (): HistogramCell { return { buckets: new Array<number>(this.upperBounds.length).fill(0), sum: 0, count: 0 } }

  /** Records one observation in seconds. */
  observe (cell: HistogramCell, seconds: number): void {
    const bounds = this.upperBounds
    for (let i = 0; i < bounds.length; i++) {
      if (seconds <= (bounds[i] as number)) {
        ;(cell.buckets[i] as number)++
        break
      }
    }
    cell.sum += seconds
    cell.count++
  }

  get (): { name: string, help: string, type: MetricType, values: ExportedValue[], aggregator: 'sum' } {
    const values: ExportedValue[] = []
    for (const { labels, cell } of this.series) {
      let cumulative = 0
      this.upperBounds.forEach((le, i) => {
        cumulative += cell.buckets[i] as number
        values.push({ labels: { ...labels, le }, value: cumulative, metricName: `${this.name}_bucket` })
      })
      values.push({ labels: { ...labels, le: '+Inf' }, value: cell.count, metricName: `${this.name}_bucket` })
      values.push({ labels, value: cell.sum, metricName: `${this.name}_sum` })
      values.push({ labels, value: cell.count, metricName: `${this.name}_count` })
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator }
  }
}

/** The families as prom-client sees them (its Registry only calls what `Family` implements). */
export function asPromMetric (family: CounterFamily | HistogramFamily): Metric {
  // Cast: a Family implements only what prom-client's Registry calls, not the whole Metric class.
  return family as unknown as Metric
}
