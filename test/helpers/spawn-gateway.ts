import { spawn, type ChildProcess } from 'node:child_process'
import { repoPath } from './paths.js'

export interface SpawnedGateway {
  child: ChildProcess
  port: number
  base: string
  /** Everything the process wrote to stdout so far. */
  output: () => string
  /** Resolves with the exit code once the process ends. */
  exited: Promise<number | null>
}

/**
 * Starts `lanegate start` as its own process on a free port (`--port 0`) and resolves once it listens. The
 * process is the compiled CLI (`bin/lanegate.js`), exactly what `npm start` runs.
 */
export async function spawnGateway (options: { config?: string, env?: NodeJS.ProcessEnv } = {}): Promise<SpawnedGateway> {
  const child = spawn(process.execPath, [repoPath('bin/lanegate.js'), 'start', '--config', options.config ?? repoPath('gateway.yaml'), '--port', '0', '--host', '127.0.0.1'], {
    env: { ...process.env, LANEGATE_LOG_LEVEL: 'info', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout?.on('data', (d: Buffer) => {
      output += d.toString()
      const m = /listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(output)
      if (m) resolve(Number(m[1]))
    })
    child.on('exit', (code) => reject(new Error(`lanegate exited ${code} before listening: ${output}`)))
  })
  return { child, port, base: `http://127.0.0.1:${port}`, output: () => output, exited }
}
