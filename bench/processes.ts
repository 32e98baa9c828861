import { spawn, type ChildProcess } from 'node:child_process'
import { createWriteStream, existsSync, readFileSync } from 'node:fs'
import { createServer, connect } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import type { LoadJob, LoadResult, WorkerReply } from './load-job.js'

/**
 * Starting, pinning and stopping the processes of a benchmark run: servers on one core, the load generator
 * on the other. Pinning uses `taskset -c N` as the command prefix (the pid is then node's: taskset execs).
 */

/** Where processes run. `undefined` cores mean "not pinned" (one core, or no taskset). */
export interface Placement {
  serverCore?: number
  loadgenCore?: number
}

/** A free TCP port on 127.0.0.1 (asks the kernel, then closes). */
export function freePort (): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })
}

/** Whether `taskset` can be run here. */
export function hasTaskset (): boolean {
  return ['/usr/bin/taskset', '/bin/taskset'].some((p) => existsSync(p))
}

/** Spawns `command args`, pinned to `core` when given, stdout/stderr appended to `logFile`. */
export function spawnPinned (command: string, args: string[], options: { core?: number, logFile: string, env?: NodeJS.ProcessEnv, ipc?: boolean }): ChildProcess {
  const [file, argv] = options.core === undefined ? [command, args] : ['taskset', ['-c', String(options.core), command, ...args]]
  const log = createWriteStream(options.logFile, { flags: 'a' })
  const child = spawn(file, argv, {
    env: options.env ?? process.env,
    stdio: options.ipc === true ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
  })
  child.stdout?.pipe(log)
  child.stderr?.pipe(log)
  return child
}

/** Resolves once something accepts TCP connections on `port`; rejects if `child` exits first or after `ms`. */
export async function waitForPort (port: number, child: ChildProcess, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`exited (${child.exitCode ?? child.signalCode}) before listening`)
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1')
      socket.once('connect', () => { socket.destroy(); resolve(true) })
      socket.once('error', () => resolve(false))
    })
    if (open) return
    await sleep(50)
  }
  throw new Error(`nothing listened on port ${port} within ${ms} ms`)
}

/** Stops a child: SIGTERM, then SIGKILL after `graceMs`. */
export async function stopChild (child: ChildProcess, graceMs = 5000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs)
  await exited
  clearTimeout(timer)
}

/** The last `lines` lines of a log file (for error messages). */
export function logTail (file: string, lines = 20): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n')
  } catch {
    return ''
  }
}

/** The load generator process, driven over IPC. */
export interface LoadWorker {
  pid: number
  run (job: LoadJob): Promise<LoadResult>
  close (): Promise<void>
}

/** Starts the load generator (`load-worker.js` beside this file), pinned to `core` when given. */
export function startLoadWorker (core: number | undefined, logFile: string): LoadWorker {
  const script = new URL('./load-worker.js', import.meta.url).pathname
  const child = spawnPinned(process.execPath, [script], { core, logFile, ipc: true })
  let nextId = 1
  const pending = new Map<number, { resolve: (r: LoadResult) => void, reject: (e: Error) => void }>()
  child.on('message', (message: WorkerReply) => {
    const waiter = pending.get(message.id)
    if (waiter === undefined) return
    pending.delete(message.id)
    if (message.type === 'result') waiter.resolve(message.result)
    else waiter.reject(new Error(`load generator: ${message.message}`))
  })
  child.on('exit', (code, signal) => {
    for (const waiter of pending.values()) waiter.reject(new Error(`load generator exited (${code ?? signal}); see ${logFile}`))
    pending.clear()
  })
  return {
    pid: child.pid ?? 0,
    run (job) {
      return new Promise((resolve, reject) => {
        const id = nextId++
        pending.set(id, { resolve, reject })
        child.send({ type: 'run', id, job })
      })
    },
    async close () {
      if (child.connected) child.disconnect()
      await stopChild(child)
    },
  }
}
