import { readFileSync } from 'node:fs'
import { findCommand, overview } from './commands/index.js'

/** The version in package.json (two folders up from dist/src/cli.js and from src/cli.ts alike). */
function packageVersion (): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
  return pkg.version
}

const HELP_FLAGS = new Set(['--help', '-h'])

/** Runs one CLI command; resolves to the exit code (long-running `start` resolves once listening). */
export async function main (argv: string[]): Promise<number | undefined> {
  const [name = '', ...rest] = argv
  if (name === '--version' || name === '-v' || name === 'version') {
    console.log(packageVersion())
    return 0
  }
  if (name === '' || HELP_FLAGS.has(name) || name === 'help') {
    const topic = name === 'help' ? findCommand(rest[0] ?? '') : undefined
    console.log(topic?.usage ?? overview())
    return 0
  }
  const command = findCommand(name)
  if (command === undefined) {
    console.error(`unknown command "${name}"\n\n${overview()}`)
    return 1
  }
  if (rest.some((arg) => HELP_FLAGS.has(arg))) {
    console.log(command.usage)
    return 0
  }
  return command.run(rest)
}
