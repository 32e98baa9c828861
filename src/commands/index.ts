import type { Command } from './command.js'
import { configCommand } from './config.js'
import { explain } from './explain.js'
import { hashSecret } from './hash-secret.js'
import { loadtest } from './loadtest.js'
import { reload } from './reload.js'
import { routes } from './routes.js'
import { start } from './start.js'
import { stop } from './stop.js'
import { transformCommand } from './transform.js'
import { userToken } from './user-token.js'
import { validate } from './validate.js'

/**
 * Every `lanegate` subcommand, in the order `lanegate --help` lists them. A command file imports at its top only
 * what its usage needs and loads what it runs inside `run`, so that listing them all stays cheap.
 */
export const COMMANDS: readonly Command[] = [start, reload, stop, validate, hashSecret, userToken, routes, explain, transformCommand, loadtest, configCommand]

/** The command named `name`, if there is one. */
export function findCommand (name: string): Command | undefined {
  return COMMANDS.find((command) => command.name === name)
}

/** The text of `lanegate --help`: usage and the command list. */
export function overview (): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length), 'help <cmd>'.length) + 2
  const lines = COMMANDS.map((c) => `  ${c.name.padEnd(width)}${c.summary}`)
  return `lanegate — API gateway for retail platforms

Usage: lanegate <command> [options]
       lanegate --version

Commands:
${lines.join('\n')}
  ${'help <cmd>'.padEnd(width)}Show a command's options

Run 'lanegate help <command>' for details.`
}
