import { readFileSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { spawnGateway, type SpawnedGateway, type SpawnOptions } from './spawn-gateway.js'
import { createTestPki, type TestPki } from './test-pki.js'

interface Teardown { teardown (fn: () => unknown): void }

export interface OwnConfigGateway {
  gateway: SpawnedGateway
  /** The temporary folder that holds the config file and the data dir. */
  dir: string
  /** The config file (`dir/gateway.yaml`): a test may rewrite it and reload. */
  file: string
  /** `dir/data`, the config's `server.data_dir`. */
  dataDir: string
}

/**
 * A real `lanegate start` on a config of the test's own: `config(dataDir)` is written to gateway.yaml in a fresh
 * temporary folder and the gateway spawned on it (spawnGateway's options, e.g. `admin: false`, `env`). At
 * teardown the gateway gets SIGTERM, its exit is waited for, and the folder is removed.
 */
export async function gatewayOnConfig (t: Teardown, config: (dataDir: string) => string, options: Omit<SpawnOptions, 'config'> = {}): Promise<OwnConfigGateway> {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-e2e-'))
  const file = join(dir, 'gateway.yaml')
  const dataDir = join(dir, 'data')
  const remove = (): Promise<void> => rm(dir, { recursive: true, force: true })
  let gateway: SpawnedGateway
  try {
    await writeFile(file, config(dataDir))
    gateway = await spawnGateway({ ...options, config: file })
  } catch (error) {
    await remove()
    throw error
  }
  // One teardown, in this order: the folder goes only once the process that writes into it has exited.
  t.teardown(async () => {
    gateway.child.kill('SIGTERM')
    await gateway.exited
    await remove()
  })
  return { gateway, dir, file, dataDir }
}

/**
 * The lines a small config starts with: `server` (data_dir, then `server`, more keys in flow style, e.g.
 * `body_limit_bytes: 1024`), an admin listener on a free port, an issuer and no scopes. `services:` and the
 * rest follow.
 */
export function configHead (dataDir: string, server = ''): string {
  return `server: { data_dir: ${dataDir}${server === '' ? '' : `, ${server}`} }
admin: { port: 0 }
issuer: { issuer: http://localhost:8080 }
scopes: {}
`
}

export interface GatewayPki {
  pki: TestPki
  /** The CA's certificate (PEM), for clients. */
  ca: Buffer
  /** `cert_file` and `key_file` of the gateway's pair (localhost, 127.0.0.1), as a YAML flow mapping's entries. */
  pair: string
  /** The same pair as `server.tls` settings (for a fixture's `set('server.tls', …)`). */
  tls: { cert_file: string, key_file: string }
}

/**
 * A private CA with a listener pair for `localhost` and 127.0.0.1 (named `gw`), removed at teardown: what every
 * TLS or HTTP/2 listener test starts with.
 */
export function gatewayPki (t: Teardown, caName: string): GatewayPki {
  const pki = createTestPki(caName)
  t.teardown(() => pki.remove())
  const gw = pki.issue('gw', 'localhost', { sans: 'DNS:localhost,IP:127.0.0.1' })
  return { pki, ca: readFileSync(pki.caCert), pair: `cert_file: ${gw.cert}, key_file: ${gw.key}`, tls: { cert_file: gw.cert, key_file: gw.key } }
}
