import { readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { parse } from 'yaml'
import { substituteEnv } from '../config/env-substitution.js'
import { readPidFile } from '../pid-file.js'

export const RELOAD_USAGE = `lanegate reload [--config FILE]

Sends SIGHUP to the gateway serving FILE (default ./gateway.yaml): the pid comes from server.data_dir/lanegate.pid,
which \`lanegate start\` writes (the primary's, with server.workers > 1), or LANEGATE_PID_FILE when set (as
\`npm run cluster\` sets it for each instance). The gateway logs what the reload did.`

export const STOP_USAGE = `lanegate stop [--config FILE]

Sends SIGTERM to the gateway serving FILE (default ./gateway.yaml), as named in server.data_dir/lanegate.pid: it
finishes in-flight requests (up to server.shutdown_grace_ms), then exits. LANEGATE_PID_FILE, when set, names the
pid file instead (\`npm run cluster\` gives each instance its own).`

/**
 * server.data_dir of FILE, read without validating the rest: `lanegate reload` must reach the gateway even when
 * the edit it is asked to load is invalid (the gateway then logs why and keeps its config).
 */
function dataDirOf (file: string): string {
  const raw = parse(readFileSync(file, 'utf8')) as { server?: { data_dir?: unknown } } | null
  const given = substituteEnv(raw?.server?.data_dir ?? './data', process.env, [])
  return resolve(dirname(file), String(given))
}

/** `lanegate reload` (SIGHUP) and `lanegate stop` (SIGTERM): signal the gateway named by its pid file. */
export function signalCommand (command: 'reload' | 'stop', args: string[]): number {
  const { values } = parseArgs({ args, options: { config: { type: 'string', default: 'gateway.yaml' } } })
  let dataDir: string
  try {
    dataDir = dataDirOf(values.config)
  } catch (error) {
    console.error(`${command}: cannot read ${values.config}: ${(error as Error).message.split('\n')[0]}`)
    return 1
  }
  const found = readPidFile(dataDir)
  if ('problem' in found) {
    console.error(`${command}: ${found.problem}`)
    return 1
  }
  const signal = command === 'reload' ? 'SIGHUP' : 'SIGTERM'
  process.kill(found.pid, signal)
  console.log(`${command}: sent ${signal} to pid ${found.pid}`)
  return 0
}
