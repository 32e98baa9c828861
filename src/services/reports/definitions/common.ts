import type { ParamErrors } from '../report-definition.js'

const DAY_MS = 86400000

/** The `from`/`to`/`store_org_ids` parameters the sales reports share (JSON Schema properties). */
export const rangeProperties = {
  from: { type: 'string', format: 'date', description: 'First day of the report (YYYY-MM-DD, UTC), inclusive.' },
  to: { type: 'string', format: 'date', description: 'Last day of the report (YYYY-MM-DD, UTC), inclusive; not before from.' },
  store_org_ids: {
    type: 'array',
    description: 'Stores to include (each in the caller\'s tree, installed); default all of the caller\'s stores.',
    items: { type: 'string', pattern: '^org_[A-Za-z0-9_-]{1,64}$', description: 'A store organization id.' },
    minItems: 1,
    maxItems: 500,
    uniqueItems: true,
  },
} as const

export const MAX_REPORT_DAYS = 366

/** from ≤ to, and at most MAX_REPORT_DAYS days. */
export function checkRange (params: { from: string, to: string }): ParamErrors {
  const from = Date.parse(`${params.from}T00:00:00Z`)
  const to = Date.parse(`${params.to}T00:00:00Z`)
  if (from > to) return { to: ['must not be before from'] }
  if ((to - from) / DAY_MS + 1 > MAX_REPORT_DAYS) return { to: [`the range must not exceed ${MAX_REPORT_DAYS} days`] }
  return {}
}

/** The half-open UTC range the stream materialization is queried with. */
export function queryRange (params: { from: string, to: string }): { from: string, to: string } {
  const end = new Date(Date.parse(`${params.to}T00:00:00Z`) + DAY_MS)
  return { from: `${params.from}T00:00:00Z`, to: end.toISOString().replace('.000Z', 'Z') }
}

/** Money sums without binary-float dust. */
export function cents (value: number): number {
  return Math.round(value * 100) / 100
}
