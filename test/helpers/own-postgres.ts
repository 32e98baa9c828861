import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { chmodSync, chownSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir, userInfo } from 'node:os'
import { join } from 'node:path'
import { freePort } from './own-redis.js'
import { waitFor } from './wait-for.js'

const BIN = '/usr/lib/postgresql/15/bin'

/**
 * A PostgreSQL server of the test's own (never the shared one on 5432): a fresh cluster in a temporary folder
 * on a free port, trust auth, so a test can stop it (`stop`: SIGKILL, or a fast shutdown) and start it again on
 * the same port with its data kept (`start`). As root, initdb and postgres run as the `postgres` user.
 */
export interface OwnPostgres {
  readonly port: number
  /** `postgres://postgres@127.0.0.1:<port>/postgres` */
  readonly url: string
  start (): Promise<void>
  /** Stops the server and waits for it to exit: `kill` (SIGKILL, a crash) or `fast` (SIGINT, fast shutdown). */
  stop (how?: 'kill' | 'fast'): Promise<void>
  /** Stops it and removes its data folder. */
  remove (): Promise<void>
}

export function postgresBinariesPresent (): boolean {
  try {
    execFileSync(join(BIN, 'postgres'), ['--version'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/** Runs as the postgres user when this process is root (postgres refuses to run as root). */
function asServerUser (command: string, args: string[]): [string, string[]] {
  return userInfo().uid === 0 ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args]
}

async function ready (port: number): Promise<boolean> {
  try {
    execFileSync(join(BIN, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(port), '-q'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

export async function ownPostgres (): Promise<OwnPostgres> {
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'lanegate-pg-'))
  const data = join(dir, 'data')
  if (userInfo().uid === 0) {
    chmodSync(dir, 0o755)
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim())
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim())
    chownSync(dir, uid, gid)
  }
  const [initCmd, initArgs] = asServerUser(join(BIN, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync'])
  execFileSync(initCmd, initArgs, { stdio: 'ignore' })
  let child: ChildProcess | undefined

  async function start (): Promise<void> {
    const [cmd, args] = asServerUser(join(BIN, 'postgres'), [
      '-D', data, '-p', String(port), '-h', '127.0.0.1', '-k', dir, '-c', 'fsync=off', '-c', 'max_connections=100',
    ])
    // runuser is the direct child: postgres runs as its child, and signals to runuser are passed on.
    const started = spawn(cmd, args, { stdio: 'ignore' })
    child = started
    const outcome = await waitFor(async () => started.exitCode !== null ? 'exited' : await ready(port) ? 'accepting' : undefined, { what: `postgres on port ${port} to accept connections`, intervalMs: 25 })
    if (outcome === 'exited') throw new Error(`postgres on port ${port} exited (${started.exitCode})`)
  }

  async function stop (how: 'kill' | 'fast' = 'fast'): Promise<void> {
    const running = child
    if (running === undefined || running.exitCode !== null || running.signalCode !== null) return
    const exited = new Promise((resolve) => running.once('exit', resolve))
    // The postmaster itself: runuser does not pass signals on. SIGKILL: a crash (its backends notice and exit);
    // SIGINT: PostgreSQL's fast shutdown (clients get 57P01 admin_shutdown).
    const pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0])
    process.kill(pid, how === 'kill' ? 'SIGKILL' : 'SIGINT')
    await exited
    // A killed postmaster leaves backends for a moment, and the port until they go.
    await waitFor(async () => !await ready(port), { what: `the port ${port} of the stopped postgres to close`, intervalMs: 25 })
  }

  await start()
  return {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start,
    stop,
    remove: async () => {
      await stop('fast')
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
