import { generateKeyPairSync } from 'node:crypto'
import { mkdir, mkdtemp, readdir, readFile, rm, stat, unlink, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { calculateJwkThumbprint, decodeProtectedHeader, jwtVerify, SignJWT } from 'jose'
import { generateKeyFile } from '../../src/oauth/key-files.js'
import { createKeyStore, type FileKeyStore } from '../../src/oauth/key-store.js'
import { buildOauthConfig } from '../helpers/oauth-config.js'
import { waitFor } from '../helpers/wait-for.js'

/** The part of tap's Test these helpers need. */
interface Teardown { teardown (fn: () => unknown): void }

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k', 'oth']

async function freshConfig (t: Teardown, algorithm?: 'EdDSA' | 'ES256' | 'RS256') {
  const dataDir = await mkdtemp(join(tmpdir(), 'lanegate-keys-'))
  t.teardown(() => rm(dataDir, { recursive: true, force: true }))
  return buildOauthConfig({ dataDir, ...(algorithm ? { algorithm } : {}) })
}

async function open (t: Teardown, config: Awaited<ReturnType<typeof buildOauthConfig>>, options = {}): Promise<FileKeyStore> {
  const store = await createKeyStore(config, { rescanIntervalMs: 0, ...options })
  t.teardown(() => store.close())
  return store
}

async function roundTrip (store: FileKeyStore): Promise<string> {
  const { kid, alg, privateKey } = store.signing
  const jwt = await new SignJWT({}).setProtectedHeader({ alg, kid, typ: 'at+jwt' }).setIssuer('x').sign(privateKey)
  await jwtVerify(jwt, store.resolve, { algorithms: [alg] })
  return decodeProtectedHeader(jwt).kid as string
}

t.test('first start generates one EdDSA key: 0600 PEM, sidecar, kid = RFC 7638 thumbprint', async (t) => {
  const config = await freshConfig(t)
  const store = await open(t, config)
  const dir = join(config.server.data_dir, 'keys')
  t.equal(store.dir, dir)
  const files = (await readdir(dir)).sort()
  const kid = store.signing.kid
  t.same(files, [`${kid}.json`, `${kid}.pem`])
  t.equal((await stat(join(dir, `${kid}.pem`))).mode & 0o777, 0o600)
  t.equal((await stat(dir)).mode & 0o777, 0o700)
  t.match(await readFile(join(dir, `${kid}.pem`), 'utf8'), /^-----BEGIN PRIVATE KEY-----/)
  t.same(JSON.parse(await readFile(join(dir, `${kid}.json`), 'utf8')).alg, 'EdDSA')
  const [jwk] = store.jwks().keys
  t.equal(kid, await calculateJwkThumbprint({ kty: jwk!.kty!, crv: jwk!.crv!, x: jwk!.x! }))
  t.same(store.jwks(), { keys: [{ kty: 'OKP', crv: 'Ed25519', x: jwk!.x, kid, use: 'sig', alg: 'EdDSA' }] })
  t.equal(await roundTrip(store), kid)
})

t.test('a restart loads the existing key instead of generating one', async (t) => {
  const config = await freshConfig(t)
  const first = await open(t, config)
  const second = await open(t, config)
  t.equal(second.signing.kid, first.signing.kid)
  t.equal(second.jwks().keys.length, 1)
})

t.test('gateways starting at once on an empty key directory generate one key and all sign with it', async (t) => {
  const config = await freshConfig(t)
  const stores = await Promise.all(Array.from({ length: 4 }, () => open(t, config)))
  const kids = stores.map((store) => store.signing.kid)
  t.same(kids, Array.from({ length: 4 }, () => kids[0]), 'every instance signs with the same key')
  const files = (await readdir(join(config.server.data_dir, 'keys'))).sort()
  t.same(files, [`${kids[0]}.json`, `${kids[0]}.pem`], 'one key on disk, and the lock file is gone')
})

t.test('a generation lock left by a dead process is taken over', async (t) => {
  const config = await freshConfig(t)
  const dir = join(config.server.data_dir, 'keys')
  await mkdir(dir, { recursive: true, mode: 0o700 })
  await writeFile(join(dir, '.generate.lock'), '99999')
  const old = new Date(Date.now() - 60_000)
  await utimes(join(dir, '.generate.lock'), old, old)
  const store = await open(t, config)
  t.same((await readdir(dir)).sort(), [`${store.signing.kid}.json`, `${store.signing.kid}.pem`])
})

for (const [algorithm, expected] of [['ES256', { kty: 'EC', crv: 'P-256' }], ['RS256', { kty: 'RSA', e: 'AQAB' }]] as const) {
  t.test(`${algorithm} keys are generated when issuer.algorithm selects them; the JWKS has public members only (C3)`, async (t) => {
    const store = await open(t, await freshConfig(t, algorithm))
    const [jwk] = store.jwks().keys
    t.match(jwk, { ...expected, kid: store.signing.kid, use: 'sig', alg: algorithm })
    for (const member of PRIVATE_MEMBERS) t.notOk(member in jwk!, `no ${member}`)
    t.equal(store.signing.alg, algorithm)
    t.equal(await roundTrip(store), store.signing.kid)
  })
}

t.test('rotation (C1): a new key is published at once, signs only after the activation delay, old keys stay until deleted', async (t) => {
  const config = await freshConfig(t)
  let now = Date.now()
  const store = await open(t, config, { now: () => now })
  const dir = store.dir
  const k1 = store.signing.kid
  const hourAgo = new Date(now - 3_600_000)
  await utimes(join(dir, `${k1}.pem`), hourAgo, hourAgo)
  await store.refresh()

  const k2 = await generateKeyFile(dir, 'ES256')
  await store.refresh()
  t.same(store.jwks().keys.map((k) => k.kid).sort(), [k1, k2].sort(), 'both published')
  t.equal(store.signing.kid, k1, 'the new key does not sign yet')
  const tokenFromK1 = await roundTrip(store)

  now += 14 * 60_000
  t.equal(store.signing.kid, k1, 'still not after 14 minutes')
  now += 60_000 + 1_000
  t.equal(store.signing.kid, k2, 'after 15 minutes the newest key signs')
  t.equal(store.signing.alg, 'ES256')
  t.equal(await roundTrip(store), k2)
  t.equal(tokenFromK1, k1)

  await unlink(join(dir, `${k1}.pem`))
  await store.refresh()
  t.same(store.jwks().keys.map((k) => k.kid), [k2], 'a deleted key is no longer published')
})

t.test('the directory is rescanned on a timer: a key file added is published without a restart', async (t) => {
  const config = await freshConfig(t)
  const store = await open(t, config, { rescanIntervalMs: 20 })
  const k2 = await generateKeyFile(store.dir, 'EdDSA')
  await waitFor(() => store.jwks().keys.length >= 2, { what: 'the rescan to publish the added key' })
  t.ok(store.jwks().keys.some((k) => k.kid === k2))
})

t.test('a PEM dropped in without a sidecar: the alg follows from the key type and the kid from the file name', async (t) => {
  const config = await freshConfig(t)
  const dir = join(config.server.data_dir, 'keys')
  await mkdir(dir, { recursive: true })
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  await writeFile(join(dir, 'ops-2026-03.pem'), privateKey.export({ format: 'pem', type: 'pkcs8' }), { mode: 0o600 })
  const store = await open(t, config)
  t.equal(store.signing.kid, 'ops-2026-03')
  t.equal(store.signing.alg, 'ES256')
  t.same((await readdir(dir)).sort(), ['ops-2026-03.pem'], 'no key generated beside it')
})

t.test('a broken key file fails boot with its path; at runtime the keys loaded before are kept', async (t) => {
  const config = await freshConfig(t)
  const store = await open(t, config)
  const kid = store.signing.kid
  await writeFile(join(store.dir, 'broken.pem'), 'not a key')
  await store.refresh()
  t.equal(store.signing.kid, kid)
  t.equal(store.jwks().keys.length, 1)
  await t.rejects(createKeyStore(config, { rescanIntervalMs: 0 }), { name: 'KeyFileError', message: `${join(store.dir, 'broken.pem')}: not a PKCS8 PEM private key` })
})

t.test('a sidecar that contradicts the key is refused', async (t) => {
  const config = await freshConfig(t)
  const store = await open(t, config)
  await writeFile(join(store.dir, `${store.signing.kid}.json`), '{"alg":"RS256"}')
  await t.rejects(createKeyStore(config, { rescanIntervalMs: 0 }), { name: 'KeyFileError', message: /the sidecar says alg RS256 but the key is for EdDSA/ })
})

t.test('relative data_dir resolves against the working directory, key_dir against data_dir', async (t) => {
  const config = await freshConfig(t)
  const relative = join('dist-oauth', `keys-test-${process.pid}`)
  t.teardown(() => rm(relative, { recursive: true, force: true }))
  const store = await open(t, { ...config, server: { ...config.server, data_dir: relative } })
  t.equal(store.dir, join(process.cwd(), relative, 'keys'))
})
