import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process'

/**
 * Spawns `node ...args` through `env -i` with only PATH, HOME and `env`: a plain process, as a supervisor would
 * start it. Not with this test runner's environment: tap injects its process-info hooks (NODE_OPTIONS) into every
 * child it sees spawned, and those open process.stdout early (making the descriptor non-blocking) and hook exit,
 * which hid the faults of issue 27.
 */
export function spawnPlainNode (args: readonly string[], env: Record<string, string | undefined>, stdio: StdioOptions): ChildProcess {
  const vars: Record<string, string | undefined> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...env }
  const assignments = Object.entries(vars).filter((e): e is [string, string] => e[1] !== undefined).map(([name, value]) => `${name}=${value}`)
  return spawn('env', ['-i', ...assignments, process.execPath, ...args], { stdio })
}
