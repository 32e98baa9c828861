import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import { bootGateway, type Booted } from '../../src/start/boot.js'
import type { GatewayConfig } from '../../src/config/types.js'
import type { LoadedConfig } from '../../src/config/load-config.js'
import { createLogger } from '../../src/logging/logger.js'
import { repoPath } from './paths.js'

export interface TestAppOptions {
  /** Config text; default: the shipped demo gateway.yaml. */
  yaml?: string
  /** Config file to boot from (enables reload tests); overrides `yaml`. */
  file?: string
  /** Environment for ${ENV} substitution (merged over process.env). */
  env?: Record<string, string>
  /** Edits to the parsed config before boot. */
  patch?: (config: GatewayConfig) => void
  /** Log level of the captured logger; default debug. */
  logLevel?: string
}

export interface TestApp extends Booted {
  app: FastifyInstance
  /** Every log line written during the test, for "no secret in any log" assertions. */
  logs: string[]
  dataDir: string
}

/**
 * Boots the whole gateway for a test: demo config unless told otherwise, a fresh temporary data dir (keys,
 * SQLite), logs captured in memory at debug level. Call `close()` in t.teardown.
 */
export async function buildTestApp (options: TestAppOptions = {}): Promise<TestApp> {
  const dataDir = await mkdtemp(join(tmpdir(), 'lanegate-test-'))
  const logs: string[] = []
  const sink = new Writable({ write (chunk: Buffer, _enc, done) { logs.push(chunk.toString('utf8')); done() } })
  const yaml = options.file === undefined ? options.yaml ?? await readFile(repoPath('gateway.yaml'), 'utf8') : undefined
  const booted = await bootGateway({
    file: options.file,
    text: yaml,
    env: { ...process.env, LANEGATE_DATA_DIR: dataDir, ...options.env },
    logger: createLogger(options.logLevel ?? 'debug', sink),
    adjust: (loaded: Pick<LoadedConfig, 'config'>) => {
      loaded.config.server.data_dir = dataDir
      options.patch?.(loaded.config)
    },
  })
  return {
    ...booted,
    logs,
    dataDir,
    close: async () => {
      await booted.close()
      await rm(dataDir, { recursive: true, force: true })
    },
  }
}

/** Obtains an access token from the app's own token endpoint (demo secrets are `<client_id>-secret`). */
export async function getToken (app: FastifyInstance, clientId: string, scope?: string, secret = `${clientId}-secret`): Promise<string> {
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret })
  if (scope !== undefined) form.set('scope', scope)
  const res = await app.inject({ method: 'POST', url: '/oauth/token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: form.toString() })
  if (res.statusCode !== 200) throw new Error(`token request for ${clientId} failed: ${res.statusCode} ${res.body}`)
  return (res.json() as { access_token: string }).access_token
}
