import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { GatewayFixture } from './gateway-fixture.js'
import type { SpawnedGateway, SpawnOptions } from './spawn-gateway.js'
import { createTestPki, type TestPki } from './test-pki.js'

interface Teardown { teardown (fn: () => unknown): void }

export interface OwnConfigGateway {
  gateway: SpawnedGateway
  /** The temporary folder that holds the config file and the data dir. */
  dir: string
  /** The config file (`dir/gateway.yaml`): a test may rewrite it and reload. */
  file: string
  /** `dir/data`, the config's `server.data_dir` (`./data` in the file). */
  dataDir: string
}

/**
 * A real `lanegate start` on a config of the test's own: the builder's `start` on `config('./data')` (the data dir
 * relative to the config's temporary folder), with spawnGateway's options (e.g. `admin: false`, `env`).
 */
export async function gatewayOnConfig (t: Teardown, config: (dataDir: string) => string, options: Omit<SpawnOptions, 'config'> = {}): Promise<OwnConfigGateway> {
  const { gateway, dir, file } = await GatewayFixture.parse(config('./data')).start(t, options)
  return { gateway, dir, file, dataDir: join(dir, 'data') }
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
