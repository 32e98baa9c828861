import { spawn, type ChildProcess } from 'node:child_process'
import { createServer } from 'node:net'
import { GATEWAY_NODE_FLAGS } from '../../src/node-tuning/node-flags.js'
import { DEFAULT_ADMIN_PORT } from '../../src/observability/admin-settings.js'
import { repoPath } from './paths.js'
import { waitFor } from './wait-for.js'

export interface SpawnedGateway {
  child: ChildProcess
  port: number
  base: string
  /** The admin listener's URL (`http://127.0.0.1:<port>`), when the config has one (not read with `unreadStdout`). */
  admin: string | undefined
  /** Everything the process wrote to stdout so far (empty with `unreadStdout`). */
  output: () => string
  /** Everything the process wrote to stderr so far. */
  errors: () => string
  /** Resolves with the exit code once the process ends. */
  exited: Promise<number | null>
}

export interface SpawnOptions {
  config?: string
  env?: NodeJS.ProcessEnv
  /** Arguments after `start --config FILE` (default `--port 0 --host 127.0.0.1`). */
  args?: string[]
  /**
   * Leave stdout a pipe nobody reads (a stalled log shipper): readiness is then found by polling /healthz on
   * `port`, which must be given.
   */
  unreadStdout?: boolean
  /** Port to listen on (with unreadStdout). */
  port?: number
  /** Working directory of the process (default: this one's). */
  cwd?: string
  /** `false` for a config without an admin listener: then its `Admin listening on` line is not waited for. */
  admin?: false
  /** The CLI to run (default this checkout's `bin/lanegate.js`; e.g. one installed from the packed tarball). */
  bin?: string
  /** node's options before the CLI (default: `npm start`'s, src/node-tuning/node-flags.ts). */
  nodeArgs?: string[]
}

/** A TCP port that was free a moment ago (listen on 0, read it, close). */
export async function freePort (): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

/**
 * Starts `lanegate start` as its own process on a free port (`--port 0`) and resolves once it listens. The
 * process is the compiled CLI (`bin/lanegate.js`) with `npm start`'s node options, exactly what `npm start` runs. The admin listener gets a
 * free port too (`LANEGATE_ADMIN_PORT=0`, read by the demo gateway.yaml); pass `admin: false` for a config
 * without one, otherwise the helper waits for its `Admin listening on` line as well.
 */
export async function spawnGateway (options: SpawnOptions = {}): Promise<SpawnedGateway> {
  const started = startGatewayProcess(options)
  const { child, exited } = started
  if (options.unreadStdout === true) {
    if (options.port === undefined) throw new Error('unreadStdout needs a port')
    const port = options.port
    const answering = waitFor(() => fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false), { what: `lanegate to answer /healthz on port ${port}`, timeoutMs: 20_000, intervalMs: 100 })
    const died = exited.then(() => { throw new Error(`lanegate exited before listening: ${started.errors()}`) })
    await Promise.race([answering, died])
    return { ...started, port, base: `http://127.0.0.1:${port}`, admin: undefined }
  }
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout?.on('data', () => {
      const m = /listening at https?:\/\/127\.0\.0\.1:(\d+)/.exec(started.output())
      // The admin listener starts right after the public one: wait for its line too (unless it is off).
      if (m && (options.admin === false || /Admin listening on http/.test(started.output()))) resolve(Number(m[1]))
    })
    child.on('exit', (code) => reject(new Error(`lanegate exited ${code} before listening: ${started.output()}${started.errors()}`)))
  })
  const admin = /Admin listening on (http:\/\/[^ ]+)/.exec(started.output())?.[1]
  // A config without `admin.port: 0` (or ${LANEGATE_ADMIN_PORT}) takes the default port: it collides with `npm start`
  // running beside the suite, and with any other test doing the same. Fail here, naming the cause.
  if (admin !== undefined && new URL(admin).port === String(DEFAULT_ADMIN_PORT)) {
    child.kill('SIGKILL')
    throw new Error(`the gateway's admin listener took the fixed port ${DEFAULT_ADMIN_PORT}: give the test's config admin: { port: 0 }`)
  }
  // A TLS listener (server.tls) logs an https:// address: `base` then says https too.
  const scheme = /listening at https:\/\/127\.0\.0\.1/.test(started.output()) ? 'https' : 'http'
  return { ...started, port, base: `${scheme}://127.0.0.1:${port}`, admin }
}

/**
 * Starts `lanegate start` without waiting for anything (start-up failure tests): stdout (unless `unreadStdout`)
 * and stderr are collected.
 */
export function startGatewayProcess (options: SpawnOptions = {}): Omit<SpawnedGateway, 'port' | 'base' | 'admin'> {
  const portArg = options.port === undefined ? '0' : String(options.port)
  const args = options.args ?? ['--port', portArg, '--host', '127.0.0.1']
  const child = spawn(process.execPath, [...options.nodeArgs ?? GATEWAY_NODE_FLAGS, options.bin ?? repoPath('bin/lanegate.js'), 'start', '--config', options.config ?? repoPath('gateway.yaml'), ...args], {
    // The admin listener on a free port too: tests spawn gateways in parallel, and 9464 would collide.
    env: { ...process.env, LANEGATE_LOG_LEVEL: 'info', LANEGATE_ADMIN_PORT: '0', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    cwd: options.cwd,
  })
  let output = ''
  let errors = ''
  child.stderr?.on('data', (d: Buffer) => { errors += d.toString() })
  if (options.unreadStdout === true) child.stdout?.pause()
  else child.stdout?.on('data', (d: Buffer) => { output += d.toString() })
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
  return { child, output: () => output, errors: () => errors, exited }
}
