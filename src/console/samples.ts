import type { CounterCell, HistogramCell } from '../observability/series.js'
import type { GatewayMetrics } from '../observability/metrics.js'

/** 15 minutes at one sample a second. */
export const RING_SECONDS = 900

/** One upstream's calls in one second. */
export interface UpstreamSample {
  calls: number
  /** Calls that did not end `ok` (a 4xx/5xx mirrored, unreachable, timeout). */
  errors: number
  /** Latency bucket counts of those calls (the metrics' bounds, then one past the last). */
  latency: number[]
}

/**
 * What the gateway did during one second, as differences of its metric counters: every field sums over
 * processes (the primary of `server.workers` > 1 adds the workers' samples of the same second).
 */
export interface Sample {
  /** Unix time in seconds: the second the counts were read at the end of. */
  t: number
  requests: number
  /** Answers by status class: 1xx … 5xx. */
  status: [number, number, number, number, number]
  /** Request latency bucket counts (the metrics' bounds, then one past the last). */
  latency: number[]
  /** 429s by the limit that refused them (only limits that refused this second). */
  limited: Record<string, number>
  /** Calls per upstream (only upstreams called this second). */
  upstreams: Record<string, UpstreamSample>
  tokens: number
}

/**
 * The last 15 minutes of the gateway's own counters, one sample a second, kept in a ring. A timer reads the
 * metric families once a second and stores what changed since the last read: nothing is added to a request
 * (it still only increments its metric cells), and the console reads this ring instead of Prometheus. The timer
 * is unref'd and stops with `stop()`.
 */
export class SampleRing {
  readonly #ring: (Sample | undefined)[] = new Array<Sample | undefined>(RING_SECONDS)
  readonly #seen = new WeakMap<object, number | number[]>()
  readonly #timer: NodeJS.Timeout
  readonly #bounds: number

  constructor (private readonly metrics: GatewayMetrics, private readonly now: () => number = Date.now) {
    this.#bounds = metrics.durations.upperBounds.length
    this.take(false)
    // Each sample is labelled with its wall-clock second, so the samples of several workers add up by `t`.
    const tick = (): void => { this.take(true) }
    this.#timer = setInterval(tick, 1000)
    this.#timer.unref()
  }

  stop (): void {
    clearInterval(this.#timer)
  }

  /** The samples with `t` > `since`, oldest first (all 15 minutes for `since` 0). */
  since (since = 0): Sample[] {
    const out: Sample[] = []
    const last = Math.floor(this.now() / 1000)
    for (let t = Math.max(since + 1, last - RING_SECONDS + 1); t <= last; t++) {
      const sample = this.#ring[t % RING_SECONDS]
      if (sample !== undefined && sample.t === t) out.push(sample)
    }
    return out
  }

  /** Reads the counters now; `keep` false only primes the last-seen values (at start: what came before is not this second's). */
  take (keep = true): Sample {
    const t = Math.floor(this.now() / 1000)
    const sample: Sample = { t, requests: 0, status: [0, 0, 0, 0, 0], latency: new Array<number>(this.#bounds + 1).fill(0), limited: {}, upstreams: {}, tokens: 0 }
    this.metrics.requests.each((labels, cell) => {
      const delta = this.#counter(cell)
      if (delta === 0) return
      sample.requests += delta
      const index = Math.floor(Number(labels.status) / 100) - 1
      if (index >= 0 && index < 5) sample.status[index as 0] += delta
    })
    this.metrics.durations.each((_labels, cell) => { this.#histogram(cell, sample.latency) })
    this.metrics.rateLimited.each((labels, cell) => {
      const delta = this.#counter(cell)
      if (delta > 0) sample.limited[labels.limit ?? 'unknown'] = (sample.limited[labels.limit ?? 'unknown'] ?? 0) + delta
    })
    this.metrics.upstreamRequests.each((labels, cell) => {
      const delta = this.#counter(cell)
      if (delta === 0) return
      const entry = this.#upstream(sample, labels.upstream ?? '')
      entry.calls += delta
      if (labels.outcome !== 'ok') entry.errors += delta
    })
    this.metrics.upstreamDurations.each((labels, cell) => {
      const name = labels.upstream ?? ''
      const scratch = new Array<number>(this.#bounds + 1).fill(0)
      if (this.#histogram(cell, scratch)) {
        const entry = this.#upstream(sample, name)
        entry.latency = entry.latency.map((n, i) => n + (scratch[i] as number))
      }
    })
    this.metrics.tokensIssued.each((_labels, cell) => { sample.tokens += this.#counter(cell) })
    if (keep) this.#ring[t % RING_SECONDS] = mergeInto(this.#ring[t % RING_SECONDS]?.t === t ? this.#ring[t % RING_SECONDS] : undefined, sample)
    return sample
  }

  #upstream (sample: Sample, name: string): UpstreamSample {
    let entry = sample.upstreams[name]
    if (entry === undefined) {
      entry = { calls: 0, errors: 0, latency: new Array<number>(this.#bounds + 1).fill(0) }
      sample.upstreams[name] = entry
    }
    return entry
  }

  #counter (cell: CounterCell): number {
    const before = (this.#seen.get(cell) as number | undefined) ?? 0
    this.#seen.set(cell, cell.value)
    return cell.value - before
  }

  /** Adds the cell's new observations per bucket to `into`; true when there were any. */
  #histogram (cell: HistogramCell, into: number[]): boolean {
    const before = (this.#seen.get(cell) as number[] | undefined) ?? []
    const now = [...cell.buckets, cell.count - cell.buckets.reduce((a, b) => a + b, 0)]
    this.#seen.set(cell, now)
    let any = false
    now.forEach((n, i) => {
      const delta = n - (before[i] ?? 0)
      if (delta !== 0) {
        into[i] = (into[i] ?? 0) + delta
        any = true
      }
    })
    return any
  }
}

/** Adds `b` to `a` (the same second from two processes, or a timer that fired twice in one second). */
export function mergeInto (a: Sample | undefined, b: Sample): Sample {
  if (a === undefined) return b
  const sum = (x: number[], y: number[]): number[] => x.map((n, i) => n + (y[i] ?? 0))
  const limited = { ...a.limited }
  for (const [k, n] of Object.entries(b.limited)) limited[k] = (limited[k] ?? 0) + n
  const upstreams: Record<string, UpstreamSample> = { ...a.upstreams }
  for (const [k, u] of Object.entries(b.upstreams)) {
    const known = upstreams[k]
    upstreams[k] = known === undefined ? u : { calls: known.calls + u.calls, errors: known.errors + u.errors, latency: sum(known.latency, u.latency) }
  }
  return {
    t: a.t,
    requests: a.requests + b.requests,
    status: sum(a.status, b.status) as Sample['status'],
    latency: sum(a.latency, b.latency),
    limited,
    upstreams,
    tokens: a.tokens + b.tokens,
  }
}

/** Merges several processes' samples by second, oldest first. */
export function mergeSamples (sets: readonly (readonly Sample[])[]): Sample[] {
  const byT = new Map<number, Sample>()
  for (const set of sets) for (const s of set) byT.set(s.t, mergeInto(byT.get(s.t), s))
  return [...byT.values()].sort((x, y) => x.t - y.t)
}

/**
 * The `q` quantile (0..1) of bucketed latencies, in milliseconds: linear within the bucket that holds it (the
 * bucket past the last bound reads as that bound). Undefined with no observation.
 */
export function quantileMs (buckets: readonly number[], bounds: readonly number[], q: number): number | undefined {
  const total = buckets.reduce((a, b) => a + b, 0)
  if (total === 0) return undefined
  const rank = q * total
  let seen = 0
  for (let i = 0; i < buckets.length; i++) {
    const n = buckets[i] as number
    if (n > 0 && seen + n >= rank) {
      const upper = bounds[Math.min(i, bounds.length - 1)] as number
      const lower = i === 0 ? 0 : bounds[Math.min(i - 1, bounds.length - 1)] as number
      const within = i >= bounds.length ? 1 : (rank - seen) / n
      return Math.round((lower + (upper - lower) * within) * 1000 * 100) / 100
    }
    seen += n
  }
  return undefined
}
