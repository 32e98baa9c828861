import { brokenTargets } from './broken-target.js'
import { postgresRestart } from './postgres-restart.js'
import { redisRestart } from './redis-restart.js'
import { markdownTable, type FaultRow } from './report.js'

/**
 * `npm run faults`: every fault case under a steady load, then docs/reliability.md's table on stdout.
 * `--short`: the quick version (what `npm test` runs through faults-short.test.ts). Exit 1 when a case did not
 * hold.
 */
export async function runFaults (short: boolean): Promise<FaultRow[]> {
  const rows: FaultRow[] = []
  rows.push(await postgresRestart({ phaseMs: short ? 1500 : 8000, concurrency: short ? 4 : 16 }))
  rows.push(await redisRestart({ phaseMs: short ? 2000 : 8000, concurrency: short ? 4 : 16, syncIntervalMs: 0, onStoreError: 'open' }))
  rows.push(await redisRestart({ phaseMs: short ? 2000 : 8000, concurrency: short ? 4 : 16, syncIntervalMs: 50, onStoreError: 'closed' }))
  rows.push(await brokenTargets({ durationMs: short ? 3000 : 20_000, concurrency: short ? 4 : 16 }))
  return rows
}

async function main (argv: string[]): Promise<number> {
  if (argv.includes('--soak-minutes')) {
    console.error('faults: --soak-minutes is not implemented yet (issue 27, step 5)')
    return 2
  }
  const rows = await runFaults(argv.includes('--short'))
  console.log(markdownTable(rows))
  for (const row of rows) if (row.notes !== '') console.log(`- ${row.case}: ${row.notes}`)
  return rows.every((r) => r.failures.length === 0) ? 0 : 1
}

if (process.argv[1]?.endsWith('run-faults.js') === true) {
  main(process.argv.slice(2)).then((code) => process.exit(code), (error: unknown) => {
    console.error(error)
    process.exit(1)
  })
}
