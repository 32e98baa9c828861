import { parseArgs } from 'node:util'
import { ConfigError } from '../config/config-error.js'
import type { StartOptions } from '../start/server.js'
import type { Command } from './command.js'

const USAGE = `lanegate start [--config FILE] [--port N] [--host ADDR] [--config-store URL [--data-dir DIR]]

Serves the gateway described by FILE (default ./gateway.yaml). Editing the file applies it within 2 s
(invalid files are rejected and logged; the running config stays). SIGHUP reloads at once. SIGTERM/SIGINT
finish in-flight requests (up to server.shutdown_grace_ms), then exit; a second signal exits at once.
PostgreSQL and Redis are retried for server.startup_timeout_ms at start, then it exits 1 with one line.
Relative paths in FILE are relative to FILE's folder. With server.workers > 1 (or auto), a primary process
runs that many workers on the port; send it the signals. The process to signal writes its pid to
server.data_dir/lanegate.pid (under \`npm start &\`, $! is npm's pid: npm dies of SIGHUP without passing it on).
With --config-store URL (PostgreSQL), the config is the fleet's (lanegate config push), not FILE: the process
starts from the store's head and applies each pushed version; it keeps the last applied one in DIR (default
./data) and starts from that copy when the store is unreachable; with neither it refuses to start. Relative
paths in the stored config resolve against the working directory. SIGHUP looks at the store's head at once.`

/** `lanegate start`: serves the config (or, with server.workers > 1, becomes the primary of worker processes). */
async function startCommand (args: string[]): Promise<number | undefined> {
  const { values } = parseArgs({
    args,
    options: {
      config: { type: 'string', default: 'gateway.yaml' },
      port: { type: 'string' },
      host: { type: 'string' },
      'config-store': { type: 'string' },
      'data-dir': { type: 'string', default: 'data' },
    },
  })
  const { loadStartConfig, loadStoreStart, startServer } = await import('../start/server.js')
  const { StartupDependencyError } = await import('../start/startup-dependencies.js')
  const options: StartOptions = { file: values.config, port: values.port === undefined ? undefined : Number(values.port), host: values.host }
  try {
    // Validated once: the config that tells whether this process is a cluster primary is the one it boots.
    const loaded = values['config-store'] === undefined
      ? await loadStartConfig(options)
      : await loadStoreStart(options, { url: values['config-store'], dataDir: values['data-dir'], baseDir: process.cwd() })
    // server.workers > 1: this process becomes the primary of worker processes that each run startServer.
    const { startCluster } = await import('../cluster/primary.js')
    if (await startCluster({ file: values.config, config: loaded.config, store: options.store })) return undefined
    await startServer(options, loaded)
  } catch (error) {
    if (error instanceof ConfigError || error instanceof StartupDependencyError) {
      console.error(error.message)
    } else {
      console.error(`cannot start: ${error instanceof Error ? error.message : String(error)}`)
    }
    // Never hang on a failed start: whatever a half-opened client still holds, the process ends.
    setTimeout(() => process.exit(1), 250).unref()
    return 1
  }
  return undefined
}

export const start: Command = {
  name: 'start',
  summary: 'Serve gateway.yaml (reloads it on change or SIGHUP)',
  usage: USAGE,
  run: startCommand,
}
