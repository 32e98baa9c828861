import { spawn } from 'node:child_process'

export interface NodeRun {
  code: number | null
  stdout: string
  stderr: string
}

export interface RunNodeOptions {
  cwd?: string
  /** Merged over this process's environment. */
  env?: NodeJS.ProcessEnv
  /** Written to the child's stdin, which is then closed (default: stdin ignored). */
  input?: string
}

/** Runs `node script ...args` to its end and collects its exit code, stdout and stderr. */
export function runNode (script: string, args: readonly string[], options: RunNodeOptions = {}): Promise<NodeRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], {
      cwd: options.cwd,
      env: options.env === undefined ? undefined : { ...process.env, ...options.env },
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout?.on('data', (d: Buffer) => { stdout += d.toString() })
    child.stderr?.on('data', (d: Buffer) => { stderr += d.toString() })
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
    if (options.input !== undefined) child.stdin?.end(options.input)
  })
}
