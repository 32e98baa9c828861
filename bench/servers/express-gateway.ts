import { cpSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { requirePeer } from '../peers.js'
import { EXPRESS_GATEWAY_JWT_SECRET } from './express-gateway-secret.js'

/**
 * Peer: Express Gateway 1.x (archived; installed by `npm run bench:peers`) with a minimal pipeline: the proxy
 * policy alone, or jwt (HS256, no credential lookup) + rate-limit (effectively unlimited) + proxy. Its proxy
 * policy already uses a keep-alive agent. The config files are written into --dir (EG reads a folder).
 */

const { values } = parseArgs({ options: { port: { type: 'string' }, target: { type: 'string' }, dir: { type: 'string' }, policies: { type: 'string' } } })
const dir = values.dir as string
const egRoot = join(requirePeer.resolve('express-gateway/package.json'), '..')
cpSync(join(egRoot, 'lib', 'config', 'models'), join(dir, 'models'), { recursive: true })

const system = {
  db: { redis: { emulate: true, namespace: 'EG' } },
  crypto: { cipherKey: 'bench', algorithm: 'aes256', saltRounds: 10 },
  session: { secret: 'bench', resave: false, saveUninitialized: false },
  accessTokens: { timeToExpiry: 7200000 },
  refreshTokens: { timeToExpiry: 7200000 },
  authorizationCodes: { timeToExpiry: 300000 },
}
const proxy = { proxy: [{ action: { serviceEndpoint: 'lane' } }] }
const pipeline = values.policies === 'jwt'
  ? [
      { jwt: [{ action: { secretOrPublicKey: EXPRESS_GATEWAY_JWT_SECRET, checkCredentialExistence: false } }] },
      // delayMs 0: EG's default (delayAfter 1, delayMs 1000) slows every request after the first by seconds.
      { 'rate-limit': [{ action: { max: 1_000_000_000, windowMs: 60_000, delayMs: 0 } }] },
      proxy,
    ]
  : [proxy]
const gateway = {
  http: { port: Number(values.port), host: '127.0.0.1' },
  apiEndpoints: { lane: { host: '*', paths: '/*' } },
  serviceEndpoints: { lane: { url: values.target } },
  policies: ['proxy', 'jwt', 'rate-limit'],
  pipelines: { bench: { apiEndpoints: ['lane'], policies: pipeline } },
}
writeFileSync(join(dir, 'system.config.json'), JSON.stringify(system, null, 2))
writeFileSync(join(dir, 'gateway.config.json'), JSON.stringify(gateway, null, 2))

const eg = requirePeer('express-gateway') as () => { load (dir: string): { run (): Promise<unknown> } }
await eg().load(dir).run()
process.on('SIGTERM', () => process.exit(0))
