import { isLanegateError } from '../client/errors.js'
import { ConfigError } from '../config/config-error.js'
import { LOADTEST_USAGE, UsageError, parseLoadtestArgs } from '../loadtest/options.js'
import type { Command } from './command.js'

/** Where the command writes: stdout gets the result, stderr the progress and problems. */
export interface LoadtestIo {
  stdout: { write (text: string): unknown }
  stderr: { write (text: string): unknown, isTTY?: boolean }
}

/**
 * `lanegate loadtest …` (see LOADTEST_USAGE). Resolves to the exit code: 0 when the run completed and got
 * answers, 1 when it could not run (no token, unreachable gateway) or got no answer at all, 2 on bad usage.
 */
export async function loadtestCommand (argv: string[], io: LoadtestIo = { stdout: process.stdout, stderr: process.stderr }): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    io.stdout.write(`${LOADTEST_USAGE}\n`)
    return 0
  }
  let options
  try {
    options = parseLoadtestArgs(argv)
  } catch (error) {
    if (!(error instanceof UsageError)) throw error
    io.stderr.write(`lanegate loadtest: ${error.message}\n\n${LOADTEST_USAGE}\n`)
    return 2
  }
  const live = io.stderr.isTTY === true
  // autocannon loads only when a load test runs, not with every lanegate command.
  const { runLoadtest } = await import('../loadtest/run-loadtest.js')
  const { progressLine, summaryTable } = await import('../loadtest/summary-table.js')
  try {
    const summary = await runLoadtest(options, {
      onProgress: (p) => io.stderr.write(live ? `\r\x1b[2K${progressLine(p)}` : `${progressLine(p)}\n`),
      onWarning: (message) => io.stderr.write(`${live ? '\n' : ''}warning: ${message}\n`),
    })
    if (live) io.stderr.write('\n')
    io.stdout.write(options.json ? `${JSON.stringify(summary, null, 2)}\n` : `${summaryTable(summary)}\n`)
    if (summary.requests === 0) {
      io.stderr.write(`lanegate loadtest: no answer at all (${summary.errors} errors)\n`)
      return 1
    }
    return 0
  } catch (error) {
    if (isLanegateError(error) && error.source === 'token') {
      io.stderr.write(`lanegate loadtest: could not obtain a token: ${error.message}\n`)
      return 1
    }
    if (error instanceof ConfigError) {
      io.stderr.write(`${error.message}\n`)
      return 1
    }
    // fetch() reports an unreachable gateway as "fetch failed"; its cause says why (ECONNREFUSED, …).
    io.stderr.write(`lanegate loadtest: ${causes(error as Error)}\n`)
    return 1
  }
}

/** The message of `error` and of each cause under it, as far as they add something. */
function causes (error: Error): string {
  let text = error.message
  for (let cause = error.cause; cause instanceof Error; cause = cause.cause) {
    if (!text.includes(cause.message)) text += `: ${cause.message}`
  }
  return text
}

export const loadtest: Command = {
  name: 'loadtest',
  summary: 'Load-test a route of a running gateway with autocannon (gets and refreshes its own token)',
  usage: LOADTEST_USAGE,
  run: async (args) => loadtestCommand(args),
}
