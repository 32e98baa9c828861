import { spawn, type ChildProcess } from 'node:child_process'
import { repoPath } from './paths.js'

export interface SpawnedGateway {
  child: ChildProcess
  port: number
  base: string
  /** The admin listener's URL (`http://127.0.0.1:<port>`), when the config has one. */
  admin: string | undefined
  /** Everything the process wrote to stdout so far. */
  output: () => string
  /** Resolves with the exit code once the process ends. */
  exited: Promise<number | null>
}

/**
 * Starts `lanegate start` as its own process on a free port (`--port 0`) and resolves once it listens. The
 * process is the compiled CLI (`bin/lanegate.js`), exactly what `npm start` runs. The admin listener gets a
 * free port too (`LANEGATE_ADMIN_PORT=0`, read by the demo gateway.yaml); pass `admin: false` for a config
 * without one, otherwise the helper waits for its `Admin listening on` line as well.
 */
export async function spawnGateway (options: { config?: string, env?: NodeJS.ProcessEnv, admin?: false } = {}): Promise<SpawnedGateway> {
  const child = spawn(process.execPath, [repoPath('bin/lanegate.js'), 'start', '--config', options.config ?? repoPath('gateway.yaml'), '--port', '0', '--host', '127.0.0.1'], {
    // The admin listener on a free port too: tests spawn gateways in parallel, and 9464 would collide.
    env: { ...process.env, LANEGATE_LOG_LEVEL: 'info', LANEGATE_ADMIN_PORT: '0', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout?.on('data', (d: Buffer) => {
      output += d.toString()
      const m = /listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(output)
      // The admin listener starts right after the public one: wait for its line too (unless it is off).
      if (m && (options.admin === false || /Admin listening on http/.test(output))) resolve(Number(m[1]))
    })
    child.on('exit', (code) => reject(new Error(`lanegate exited ${code} before listening: ${output}`)))
  })
  const admin = /Admin listening on (http:\/\/[^ ]+)/.exec(output)?.[1]
  return { child, port, base: `http://127.0.0.1:${port}`, admin, output: () => output, exited }
}
