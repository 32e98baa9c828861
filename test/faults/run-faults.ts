import { brokenTargets } from './broken-target.js'
import { postgresRestart } from './postgres-restart.js'
import { redisRestart } from './redis-restart.js'
import { slowReaders } from './slow-readers.js'
import { soak } from './soak.js'
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
  rows.push(await slowReaders({ readers: 200, durationMs: short ? 5000 : 30_000, bodyBytes: 4 * 1024 * 1024 }))
  return rows
}

async function main (argv: string[]): Promise<number> {
  const soakAt = argv.indexOf('--soak-minutes')
  if (soakAt !== -1) {
    const minutes = Number(argv[soakAt + 1])
    if (!Number.isFinite(minutes) || minutes < 1) {
      console.error('faults: --soak-minutes needs a number of minutes (at least 1)')
      return 2
    }
    const result = await soak(minutes, (line) => console.log(line))
    console.log(JSON.stringify({ ...result, samples: undefined }))
    console.log(`flat: RSS ${result.flat.rss ? 'yes' : 'no'}, descriptors ${result.flat.fds ? 'yes' : 'no'} (last at most 10 % above first)`)
    return result.flat.rss && result.flat.fds ? 0 : 1
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
