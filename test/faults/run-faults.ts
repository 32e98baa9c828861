import { markdownTable, type FaultRow } from './report.js'
import { faultsUsage, parseFaultArgs } from './fault-args.js'

/**
 * The cases by name, in the table's order; `--case NAME` runs those whose name contains NAME. Each case's module
 * (the whole gateway behind it) is imported when it runs: `--help` and a refused argument load none.
 */
const CASES: { name: string, run: (short: boolean) => Promise<FaultRow> }[] = [
  { name: 'postgres', run: async (short) => (await import('./postgres-restart.js')).postgresRestart({ phaseMs: short ? 1500 : 8000, concurrency: short ? 4 : 16 }) },
  { name: 'redis-open', run: async (short) => (await import('./redis-restart.js')).redisRestart({ phaseMs: short ? 2000 : 8000, concurrency: short ? 4 : 16, syncIntervalMs: 0, onStoreError: 'open' }) },
  { name: 'redis-closed', run: async (short) => (await import('./redis-restart.js')).redisRestart({ phaseMs: short ? 2000 : 8000, concurrency: short ? 4 : 16, syncIntervalMs: 50, onStoreError: 'closed' }) },
  { name: 'broken-target', run: async (short) => (await import('./broken-target.js')).brokenTargets({ durationMs: short ? 3000 : 20_000, concurrency: short ? 4 : 16 }) },
  { name: 'slow-readers', run: async (short) => (await import('./slow-readers.js')).slowReaders({ readers: 200, durationMs: short ? 5000 : 30_000, bodyBytes: 4 * 1024 * 1024 }) },
  { name: 'fanout-kill', run: async (short) => (await import('./fanout-kill.js')).fanoutKill({ phaseMs: short ? 1000 : 5000, concurrency: short ? 4 : 16 }) },
]

/**
 * `npm run faults`: every fault case under a steady load, then docs/reliability.md's table on stdout.
 * `--short`: the quick version (what `npm test` runs through faults-short.test.ts); `--case NAME`: only the cases
 * whose name contains NAME (e.g. `--case fanout`, `--case redis`). Exit 1 when a case did not hold.
 */
export async function runFaults (short: boolean, only?: string): Promise<FaultRow[]> {
  const rows: FaultRow[] = []
  for (const c of CASES) if (only === undefined || c.name.includes(only)) rows.push(await c.run(short))
  return rows
}

async function main (argv: string[]): Promise<number> {
  const names = CASES.map((c) => c.name)
  const request = parseFaultArgs(argv, names)
  if (request.kind === 'help') {
    console.log(faultsUsage(names))
    return 0
  }
  if (request.kind === 'refused') {
    console.error(`faults: ${request.message}\n\n${faultsUsage(names)}`)
    return 2
  }
  if (request.kind === 'soak') {
    const { soak } = await import('./soak.js')
    const result = await soak(request.minutes, (line) => console.log(line))
    console.log(JSON.stringify({ ...result, samples: undefined }))
    console.log(`flat: heap after GC ${result.flat.heap ? 'yes' : 'no'} (last at most 10 % above the ${result.heapBaselineAtS ?? '?'} s sample), descriptors ${result.flat.fds ? 'yes' : 'no'} (last at most 10 % above first)`)
    return result.flat.heap && result.flat.fds ? 0 : 1
  }
  const rows = await runFaults(request.short, request.only)
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
