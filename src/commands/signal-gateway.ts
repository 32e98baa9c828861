import { readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { parse } from 'yaml'
import { substituteEnv } from '../config/env-substitution.js'
import { pidFilePath, readPidFile } from '../ipc/pid-file.js'

/**
 * server.data_dir of FILE, read without validating the rest: `lanegate reload` must reach the gateway even when
 * the edit it is asked to load is invalid (the gateway then logs why and keeps its config).
 */
function dataDirOf (file: string): string {
  const raw = parse(readFileSync(file, 'utf8')) as { server?: { data_dir?: unknown } } | null
  const given = substituteEnv(raw?.server?.data_dir ?? './data', process.env, [])
  return resolve(dirname(file), String(given))
}

/**
 * `lanegate reload` (SIGHUP) and `lanegate stop` (SIGTERM): signal the gateway named by its pid file, found by
 * `--data-dir DIR`, else `LANEGATE_PID_FILE`, else FILE's server.data_dir. A gateway following a config store reads
 * no FILE: name its data dir (or its pid file) instead.
 */
export function signalGateway (command: 'reload' | 'stop', args: string[]): number {
  const { values } = parseArgs({ args, options: { config: { type: 'string', default: 'gateway.yaml' }, 'data-dir': { type: 'string' } } })
  let file: string
  try {
    const ownPidFile = process.env.LANEGATE_PID_FILE !== undefined && process.env.LANEGATE_PID_FILE !== ''
    // An explicit --data-dir names the folder's own pid file even with LANEGATE_PID_FILE set (pidFilePath prefers the env).
    file = values['data-dir'] !== undefined ? join(resolve(values['data-dir']), 'lanegate.pid') : pidFilePath(ownPidFile ? '.' : dataDirOf(values.config))
  } catch (error) {
    console.error(`${command}: cannot read ${values.config}: ${(error as Error).message.split('\n')[0]}`)
    return 1
  }
  const found = readPidFile(dirname(file), file)
  if ('problem' in found) {
    console.error(`${command}: ${found.problem}`)
    return 1
  }
  const signal = command === 'reload' ? 'SIGHUP' : 'SIGTERM'
  process.kill(found.pid, signal)
  console.log(`${command}: sent ${signal} to pid ${found.pid}`)
  return 0
}
