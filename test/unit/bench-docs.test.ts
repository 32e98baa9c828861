import { readFileSync } from 'node:fs'
import t from 'tap'
import { INSTRUCTION_SCENARIOS } from '../../bench/instruction-scenarios.js'
import { SCENARIO_IDS } from '../../bench/scenario-ids.js'
import { repoPath } from '../helpers/paths.js'

const page = readFileSync(repoPath('docs/performance.md'), 'utf8')

/** The scenario ids a row of the options table names in backticks, in their order, from the row starting `start`. */
function namedIn (start: string): string[] {
  const row = page.split('\n').find((line) => line.startsWith(start))
  if (row === undefined) throw new Error(`no row starting ${start} in docs/performance.md`)
  const ids: readonly string[] = SCENARIO_IDS
  return [...row.matchAll(/`([a-z0-9-]+)`/g)].map((m) => m[1] as string).filter((name) => ids.includes(name))
}

t.test('docs/performance.md\'s options table names every scenario the harness runs', async (t) => {
  t.same(namedIn('| `--scenario ID[,ID]` |'), [...SCENARIO_IDS])
})

t.test('docs/performance.md names every scenario --instructions counts', async (t) => {
  t.same(namedIn('| `--instructions` |').sort(), [...INSTRUCTION_SCENARIOS].sort())
})
