import { spawn } from 'node:child_process'
import { collectOutput } from './collect-output.js'
import { repoPath } from './paths.js'

/**
 * `npm start -- --config FILE --port N` exactly as a user runs it (package.json's script, its node options included),
 * with its output collected. npm passes SIGTERM and SIGINT on; a SIGKILL to npm leaves the gateway serving, so a test
 * that ends it hard kills the gateway by its pid file too.
 */
export function npmStart (file: string, port: number) {
  return collectOutput(spawn('npm', ['start', '--', '--config', file, '--port', String(port), '--host', '127.0.0.1'], {
    cwd: repoPath('.'),
    env: { ...process.env, LANEGATE_LOG_LEVEL: 'info', LANEGATE_ADMIN_PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  }))
}
