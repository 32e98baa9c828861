/**
 * Small order statistics used by the harness. Everything here is pure so the unit tests can pin it down.
 */

/** Median, minimum and maximum of a list of numbers (NaN for an empty list). */
export interface Spread {
  median: number
  min: number
  max: number
}

/** The median (mean of the two middle values for an even count), min and max of `values`. */
export function spread (values: readonly number[]): Spread {
  if (values.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN }
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  const median = sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
  return { median, min: sorted[0], max: sorted[sorted.length - 1] }
}

/**
 * The q-quantile (0..1) of an ascending sorted array, nearest-rank method: the smallest value with at least
 * q·n values at or below it. That is what "p99 latency" usually means for load tools.
 */
export function quantileSorted (sorted: ArrayLike<number>, q: number): number {
  const n = sorted.length
  if (n === 0) return Number.NaN
  const rank = Math.max(1, Math.ceil(q * n))
  return sorted[Math.min(n, rank) - 1]
}

/** Latency percentiles in milliseconds. */
export interface LatencySummary {
  p50: number
  p90: number
  p99: number
  /** p99.9: in a run of fewer than 1,000 responses, the slowest one (see samplesAbove). */
  p999: number
  max: number
  mean: number
}

/** Summarizes per-response times (ms). Sorts `samples` in place (it is usually a fresh typed array). */
export function latencySummary (samples: Float64Array): LatencySummary {
  if (samples.length === 0) return { p50: Number.NaN, p90: Number.NaN, p99: Number.NaN, p999: Number.NaN, max: Number.NaN, mean: Number.NaN }
  samples.sort()
  let total = 0
  for (let i = 0; i < samples.length; i++) total += samples[i]
  return {
    p50: quantileSorted(samples, 0.5),
    p90: quantileSorted(samples, 0.9),
    p99: quantileSorted(samples, 0.99),
    p999: quantileSorted(samples, 0.999),
    max: samples[samples.length - 1],
    mean: total / samples.length,
  }
}

/**
 * How many of `n` samples lie above their nearest-rank q-quantile (ties aside): what that quantile rests on.
 * 20,000 samples put 200 above p99 and 20 above p99.9; 300 put 3 above p99 and none above p99.9.
 */
export function samplesAbove (n: number, q: number): number {
  return n === 0 ? 0 : n - Math.min(n, Math.max(1, Math.ceil(q * n)))
}

/**
 * The fewest samples for which `above` of them lie above the nearest-rank q-quantile: the latency scenario's rule
 * for a round's size. A quantile read off a handful of samples above it moves with each one of them (one slow
 * response more or less is a step of 1/above of the tail); with 20 above p99.9 a single outlier moves it by at most
 * one rank of twenty, and p99 then rests on 200.
 */
export function samplesForTail (q: number, above: number): number {
  // The nearest rank: n − ceil(q·n) ≥ above. Start from the real-valued bound, then step over floating error.
  let n = Math.max(1, Math.floor(above / (1 - q)) - 1)
  while (samplesAbove(n, q) < above) n++
  return n
}

/** A growable Float64Array of samples: a million responses cost 8 MB, not a million boxed numbers. */
export class SampleBuffer {
  private data: Float64Array
  private size = 0

  constructor (initial = 1 << 16) {
    this.data = new Float64Array(initial)
  }

  push (value: number): void {
    if (this.size === this.data.length) {
      const next = new Float64Array(this.data.length * 2)
      next.set(this.data)
      this.data = next
    }
    this.data[this.size++] = value
  }

  get length (): number {
    return this.size
  }

  /** A copy of the samples recorded so far. */
  values (): Float64Array {
    return this.data.slice(0, this.size)
  }
}

/**
 * The order in which round `round` (0-based) runs `count` variants: rotated by one each round, so no variant
 * always runs first (cold) or last (after the machine warmed up or throttled).
 */
export function rotatedOrder (count: number, round: number): number[] {
  const order: number[] = []
  for (let i = 0; i < count; i++) order.push((i + round) % count)
  return order
}

/** Rounds `value` to `digits` decimals (keeps the JSON and tables readable). */
export function round (value: number, digits = 3): number {
  if (!Number.isFinite(value)) return value
  const f = 10 ** digits
  return Math.round(value * f) / f
}
