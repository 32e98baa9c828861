import type { LoadtestProgress, LoadtestSummary } from './run-loadtest.js'

function ms (value: number): string {
  return Number.isFinite(value) ? `${value.toFixed(2)} ms` : '–'
}

function statuses (counts: Record<string, number>): string {
  return Object.entries(counts).sort(([a], [b]) => Number(a) - Number(b)).map(([s, n]) => `${s}: ${n}`).join(', ') || 'none'
}

/** The progress line: elapsed, requests, current rate, statuses so far. */
export function progressLine (p: LoadtestProgress): string {
  return `${Math.min(p.elapsedSeconds, p.durationSeconds).toFixed(0)}/${p.durationSeconds}s  ${p.requests} requests  ${p.currentRps} req/s  ` +
    `[${statuses(p.statusCounts)}]${p.errors > 0 ? `  errors: ${p.errors}` : ''}`
}

/** Two columns, the first padded. */
function table (rows: Array<[string, string]>): string {
  const width = Math.max(...rows.map(([k]) => k.length))
  return rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n')
}

/** The end-of-run table `lanegate loadtest` prints. */
export function summaryTable (s: LoadtestSummary): string {
  const rows: Array<[string, string]> = [
    ['target', `${s.method} ${s.url}`],
    ['connections', String(s.connections)],
    ['duration', `${s.durationSeconds.toFixed(1)} s`],
    ['requests', String(s.requests)],
    ['req/s', s.rps.toFixed(1)],
    ['latency p50', ms(s.latencyMs.p50)],
    ['latency p90', ms(s.latencyMs.p90)],
    ['latency p99', ms(s.latencyMs.p99)],
    ['latency max', ms(s.latencyMs.max)],
    ['status codes', statuses(s.statusCounts)],
    ['errors', s.errors === 0 ? '0' : `${s.errors} (${s.timeouts} timeouts)`],
    ['token refreshes', String(s.tokenRefreshes)],
  ]
  const limited = s.statusCounts['429'] ?? 0
  rows.push(['429 (rate limited)', limited === 0 ? '0' : `${limited} (${((limited / Math.max(1, s.requests)) * 100).toFixed(1)}%)`])
  for (const hit of s.rateLimited) {
    const limit = hit.limit === undefined ? 'no X-RateLimit-Limit' : `X-RateLimit-Limit ${hit.limit}`
    const names = hit.names.length === 0 ? '' : ` = ${hit.names.join(' or ')}`
    rows.push([`  ${hit.count}×`, `${limit}${names}${hit.error === undefined ? '' : ` — ${hit.error}`}`])
  }
  return table(rows)
}
