import { parseArgs } from 'node:util'
import { formatProblem } from '../config/config-error.js'
import { counted } from '../errors/counted.js'
import type { Command } from './command.js'
import { loadOrReport } from './load-or-report.js'

const USAGE = `lanegate validate FILE

Validates FILE in two passes (structure, then references and each policy's options). Prints every error as
FILE:LINE path: message and exits 1 if there are any; prints warnings (e.g. secrets older than
issuer.secret_max_age_days) and exits 0 otherwise.`

/** `lanegate validate [file]`: checks a config and prints its problems and warnings. */
async function validateCommand (args: string[]): Promise<number> {
  const { positionals } = parseArgs({ args, allowPositionals: true, options: {} })
  const file = positionals[0] ?? 'gateway.yaml'
  const loaded = await loadOrReport(file)
  if (loaded === undefined) return 1
  for (const w of loaded.warnings) console.log(`warning: ${formatProblem(file, w)}`)
  console.log(`${file}: valid${loaded.warnings.length > 0 ? ` (${counted(loaded.warnings.length, 'warning')})` : ''}`)
  return 0
}

export const validate: Command = {
  name: 'validate',
  summary: 'Check a config file; lists every error with its YAML path and line',
  usage: USAGE,
  run: validateCommand,
}
