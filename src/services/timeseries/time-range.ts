import type { Granularity } from './cs-client.js'

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i
const DAY_MS = 86400000

/**
 * Parses a range bound: `Y-m-d` (a whole UTC day: as `from` its midnight, as `to` the next midnight, so `to`
 * is inclusive for dates) or an RFC 3339 date-time. Returns undefined when it is neither or not a real date.
 */
export function parseBound (value: string, bound: 'from' | 'to'): Date | undefined {
  const date = DATE.exec(value)
  if (date !== null) {
    const [, y, m, d] = date.map(Number) as [number, number, number, number]
    const at = new Date(Date.UTC(y, m - 1, d))
    if (at.getUTCFullYear() !== y || at.getUTCMonth() !== m - 1 || at.getUTCDate() !== d) return undefined
    return bound === 'to' ? new Date(at.getTime() + DAY_MS) : at
  }
  if (!DATE_TIME.test(value)) return undefined
  const at = new Date(value)
  return Number.isNaN(at.getTime()) ? undefined : at
}

/** RFC 3339 UTC without milliseconds when there are none (`2026-03-01T00:00:00Z`). */
export function rfc3339 (at: Date): string {
  return at.toISOString().replace('.000Z', 'Z')
}

const APPROX_MS: Record<Granularity, number> = { hour: 3600000, day: DAY_MS, week: 7 * DAY_MS, month: 28 * DAY_MS }

/** An upper bound of the buckets a range has at a granularity (months counted as 28 days). */
export function bucketCount (from: Date, to: Date, granularity: Granularity): number {
  return Math.ceil((to.getTime() - from.getTime()) / APPROX_MS[granularity]) + 1
}
