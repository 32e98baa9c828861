import { parseArgs } from 'node:util'

/** What `npm run faults` was asked to do. */
export type FaultRequest =
  | { kind: 'help' }
  | { kind: 'refused', message: string }
  | { kind: 'soak', minutes: number }
  | { kind: 'cases', short: boolean, only: string | undefined }

export const FAULTS_USAGE = `usage: npm run faults -- [--short] [--case NAME] | --soak-minutes N | --help

  (no option)        every fault case under a steady load (about 9 minutes), then docs/reliability.md's table
  --short            the quick version of every case (a few seconds each; what npm test runs)
  --case NAME        only the cases whose name contains NAME (CASES)
  --soak-minutes N   one gateway under a mixed load and a reload a minute for N minutes; heap and descriptors must stay flat
  --help             this text
Exit 0 when every case held, 1 when one did not, 2 on a bad argument.`

/**
 * Reads the arguments strictly: an unknown option or a stray word is refused, never ignored, since ignoring one
 * (`--help`, a typo) would start the full run.
 */
export function parseFaultArgs (argv: string[], caseNames: string[]): FaultRequest {
  let values
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        help: { type: 'boolean', short: 'h' },
        short: { type: 'boolean' },
        case: { type: 'string' },
        'soak-minutes': { type: 'string' },
      },
    }))
  } catch (error) {
    return { kind: 'refused', message: (error as Error).message }
  }
  if (values.help === true) return { kind: 'help' }
  const soak = values['soak-minutes']
  if (soak !== undefined) {
    if (values.short === true || values.case !== undefined) return { kind: 'refused', message: '--soak-minutes runs alone (no --short, no --case)' }
    const minutes = Number(soak)
    if (!Number.isFinite(minutes) || minutes < 1) return { kind: 'refused', message: '--soak-minutes needs a number of minutes (at least 1)' }
    return { kind: 'soak', minutes }
  }
  const only = values.case
  if (only !== undefined && (only === '' || !caseNames.some((name) => name.includes(only)))) {
    return { kind: 'refused', message: `--case needs one of ${caseNames.join(', ')} (or a part of one)` }
  }
  return { kind: 'cases', short: values.short === true, only }
}

/** The usage text with the case names filled in. */
export function faultsUsage (caseNames: string[]): string {
  return FAULTS_USAGE.replace('(CASES)', `(${caseNames.join(', ')})`)
}
