/**
 * One `lanegate` subcommand: its name, the line `lanegate --help` shows, its full usage (`lanegate help NAME`)
 * and what it does. Every subcommand is one file in src/commands/ exporting one of these, listed once in
 * src/commands/index.ts; src/cli.ts only dispatches.
 */
export interface Command {
  /** What the user types after `lanegate`, e.g. `validate` or `config`. */
  readonly name: string
  /** One line for the command list of `lanegate --help`. */
  readonly summary: string
  /** The whole usage text of `lanegate help NAME` and `lanegate NAME --help`. */
  readonly usage: string
  /** Runs the command; resolves to the exit code (a long-running command such as `start` resolves to undefined). */
  run (args: string[]): Promise<number | undefined>
}
