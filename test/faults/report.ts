/** One fault case's figures: the row of docs/reliability.md's table. */
export interface FaultRow {
  case: string
  /** e.g. "8 loops: creates with keys (2 clients)". */
  load: string
  sent: number
  /** Answers by status over the whole run (`-1`: no answer). */
  byStatus: Record<string, number>
  lost: number
  duplicated: number
  /** From the dependency being back (or the fault ending) to the first normal answer; undefined: not applicable. */
  recoveryMs: number | undefined
  /** Checks that failed (empty: the case held). */
  failures: string[]
  notes: string
}

function statuses (byStatus: Record<string, number>): string {
  return Object.entries(byStatus).sort(([a], [b]) => Number(a) - Number(b)).map(([s, n]) => `${s === '-1' ? 'none' : s}: ${n}`).join(', ')
}

/** The rows as a markdown table. */
export function markdownTable (rows: FaultRow[]): string {
  const lines = [
    '| case | load | requests sent | answers by status | lost | duplicated | recovery | held |',
    '|---|---|---|---|---|---|---|---|',
  ]
  for (const r of rows) {
    const recovery = r.recoveryMs === undefined ? '—' : `${(r.recoveryMs / 1000).toFixed(2)} s`
    lines.push(`| ${r.case} | ${r.load} | ${r.sent} | ${statuses(r.byStatus)} | ${r.lost} | ${r.duplicated} | ${recovery} | ${r.failures.length === 0 ? 'yes' : `no: ${r.failures.join('; ')}`} |`)
  }
  return lines.join('\n')
}
