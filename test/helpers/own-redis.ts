import { spawn, type ChildProcess } from 'node:child_process'
import { connect, createServer, type AddressInfo } from 'node:net'
import { waitFor } from './wait-for.js'

/** A free TCP port on 127.0.0.1 (listen on 0, read it, close). */
export async function freePort (): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

function accepts (port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => { socket.destroy(); resolve(true) })
    socket.once('error', () => resolve(false))
  })
}

/**
 * A Redis server of the test's own (never the shared one): `redis-server --port <port> --save '' --appendonly no`,
 * so a test can stop it (`stop`) and start it again on the same port (`start`). Resolves once it accepts.
 */
export interface OwnRedis {
  readonly port: number
  readonly url: string
  start (): Promise<void>
  /** SIGKILLs the server and waits for it to exit (its data is gone: nothing is persisted). */
  stop (): Promise<void>
}

export async function ownRedis (port?: number): Promise<OwnRedis> {
  const chosen = port ?? await freePort()
  let child: ChildProcess | undefined
  async function start (): Promise<void> {
    child = spawn('redis-server', ['--port', String(chosen), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' })
    const started = child
    const outcome = await waitFor(async () => started.exitCode !== null ? 'exited' : await accepts(chosen) ? 'accepting' : undefined, { what: `redis-server on port ${chosen} to accept connections`, intervalMs: 25 })
    if (outcome === 'exited') throw new Error(`redis-server on port ${chosen} exited (${started.exitCode})`)
  }
  async function stop (): Promise<void> {
    const running = child
    if (running === undefined || running.exitCode !== null || running.signalCode !== null) return
    const exited = new Promise((resolve) => running.once('exit', resolve))
    running.kill('SIGKILL')
    await exited
  }
  await start()
  return { port: chosen, url: `redis://127.0.0.1:${chosen}`, start, stop }
}
