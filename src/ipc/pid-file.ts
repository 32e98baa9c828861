import { mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'

/**
 * The file that names the process to signal (the primary with server.workers > 1): `LANEGATE_PID_FILE` when set
 * (several gateways on one data_dir, as `npm run cluster` runs them, each need their own), else
 * server.data_dir/lanegate.pid.
 */
export function pidFilePath (dataDir: string, env: NodeJS.ProcessEnv = process.env): string {
  const own = env.LANEGATE_PID_FILE
  return resolve(own !== undefined && own !== '' ? own : join(dataDir, 'lanegate.pid'))
}

/**
 * Writes this process's pid to `data_dir/lanegate.pid` and removes it when the process exits (only while it
 * still names this process: a newer gateway on the same data_dir may have written its own). Why a file: under
 * `npm start &`, `$!` is npm's pid, and npm passes SIGTERM/SIGINT to the gateway but dies of SIGHUP itself,
 * leaving the gateway running and not reloaded; `kill -HUP $(cat data/lanegate.pid)` (or `lanegate reload`)
 * signals the gateway itself.
 */
export function writePidFile (dataDir: string): string {
  const file = pidFilePath(dataDir)
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, `${process.pid}\n`)
  process.once('exit', function removePidFile () {
    try {
      if (readFileSync(file, 'utf8').trim() === String(process.pid)) unlinkSync(file)
    } catch {
      // Already gone, or the folder with it: nothing to clean.
    }
  })
  return file
}

/** The pid a running gateway wrote in `file` (by default its pid file under `dataDir`), or a sentence saying why there is none. */
export function readPidFile (dataDir: string, file = pidFilePath(dataDir)): { pid: number } | { problem: string } {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch {
    return { problem: `no ${file}: is a gateway running with this config?` }
  }
  const pid = Number(text.trim())
  if (!Number.isInteger(pid) || pid <= 0) return { problem: `${file} does not hold a pid` }
  try {
    process.kill(pid, 0)
  } catch {
    return { problem: `${file} names pid ${pid}, which is not running (a gateway that was killed leaves it behind)` }
  }
  return { pid }
}
