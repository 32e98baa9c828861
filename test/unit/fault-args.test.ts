import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { faultsUsage, parseFaultArgs } from '../faults/fault-args.js'

// `npm run faults -- --help` used to start the full 9-minute run: unknown arguments were ignored.

const SCRIPT = fileURLToPath(new URL('../faults/run-faults.js', import.meta.url))
const NAMES = ['postgres', 'redis-open', 'redis-closed', 'broken-target', 'slow-readers', 'fanout-kill']

/** Runs the real script; a run that started the cases instead of answering is killed well past any start-up. */
function runFaults (args: string[]): { status: number | null, stdout: string, stderr: string } {
  const child = spawnSync(process.execPath, [SCRIPT, ...args], { encoding: 'utf8', timeout: 60_000, killSignal: 'SIGKILL' })
  return { status: child.status, stdout: child.stdout, stderr: child.stderr }
}

t.test('--help prints the usage, --short included, and runs nothing', async (t) => {
  const run = runFaults(['--help'])
  t.same(run, { status: 0, stdout: `${faultsUsage(NAMES)}\n`, stderr: '' })
  t.match(run.stdout, /--short {12}the quick version/)
  t.match(run.stdout, /--case NAME {8}only the cases whose name contains NAME \(postgres, redis-open, redis-closed, broken-target, slow-readers, fanout-kill\)/)
})

t.test('an unknown option is refused with the usage and exit 2', async (t) => {
  const run = runFaults(['--shrot'])
  t.same(run, { status: 2, stdout: '', stderr: `faults: ${parseFaultArgsMessage(['--shrot'])}\n\n${faultsUsage(NAMES)}\n` })
  t.match(run.stderr, /^faults: Unknown option '--shrot'/)
})

t.test('a stray word is refused with exit 2', async (t) => {
  const run = runFaults(['short'])
  t.equal(run.status, 2)
  t.match(run.stderr, /^faults: Unexpected argument 'short'/)
})

t.test('the arguments read as documented', async (t) => {
  t.same(parseFaultArgs([], NAMES), { kind: 'cases', short: false, only: undefined })
  t.same(parseFaultArgs(['--short'], NAMES), { kind: 'cases', short: true, only: undefined })
  t.same(parseFaultArgs(['--short', '--case', 'redis'], NAMES), { kind: 'cases', short: true, only: 'redis' })
  t.same(parseFaultArgs(['-h'], NAMES), { kind: 'help' })
  t.same(parseFaultArgs(['--soak-minutes', '5'], NAMES), { kind: 'soak', minutes: 5 })
  t.same(parseFaultArgs(['--soak-minutes', '0'], NAMES), { kind: 'refused', message: '--soak-minutes needs a number of minutes (at least 1)' })
  t.same(parseFaultArgs(['--soak-minutes', '5', '--short'], NAMES), { kind: 'refused', message: '--soak-minutes runs alone (no --short, no --case)' })
  t.same(parseFaultArgs(['--case', 'mysql'], NAMES), { kind: 'refused', message: '--case needs one of postgres, redis-open, redis-closed, broken-target, slow-readers, fanout-kill (or a part of one)' })
  t.same(parseFaultArgs(['--case'], NAMES).kind, 'refused')
})

function parseFaultArgsMessage (argv: string[]): string {
  const request = parseFaultArgs(argv, NAMES)
  return request.kind === 'refused' ? request.message : ''
}
