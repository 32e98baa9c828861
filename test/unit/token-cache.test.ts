import t, { type Test } from 'tap'
import { createLocalJWKSet } from 'jose'
import { cacheLifetimeMs, createTokenVerifier } from '../../src/auth/token-verifier.js'
import { silentLogger } from '../helpers/token-app.js'
import { snapshotOf, testConfig } from '../helpers/token-config.js'
import { generateTestKey, keyStoreOf, mint, serviceClaims } from '../helpers/token-mint.js'

const key = await generateTestKey('k1')
const config = testConfig({ keys: [] })
const snapshot = snapshotOf(config)

function newVerifier () {
  return createTokenVerifier({ keys: keyStoreOf(key), logger: silentLogger })
}

t.test('a cached token\'s signature under another header and payload is not a hit: it is verified, and fails', async (t) => {
  const verifier = newVerifier()
  const token = await mint(key, serviceClaims())
  t.equal((await verifier.verify(token, config, snapshot.indexes)).clientId, 'svc_pay')
  const [, , signature] = token.split('.') as [string, string, string]
  const other = await mint(key, serviceClaims('svc_other', 'org_other', 'commerce:payment-intents.read'))
  const [head, payload] = other.split('.') as [string, string]
  await t.rejects(verifier.verify(`${head}.${payload}.${signature}`, config, snapshot.indexes), { code: 'unauthenticated' })
  t.equal((await verifier.verify(token, config, snapshot.indexes)).clientId, 'svc_pay')
})

t.test('a cached token of an account revoked by a reload is rejected on its next use', async (t) => {
  const verifier = newVerifier()
  const token = await mint(key, serviceClaims())
  await verifier.verify(token, config, snapshot.indexes)
  const revoked = structuredClone(config)
  ;(revoked.service_accounts.find((a) => a.client_id === 'svc_pay') as { status: string }).status = 'revoked'
  await t.rejects(verifier.verify(token, revoked, snapshotOf(revoked).indexes), { code: 'unauthenticated' })
})

t.test('tokens with the same scope claim share one scope set; the principal keeps only what it needs', async (t) => {
  const verifier = newVerifier()
  const first = await verifier.verify(await mint(key, serviceClaims()), config, snapshot.indexes)
  const second = await verifier.verify(await mint(key, serviceClaims()), config, snapshot.indexes)
  t.not(first, second)
  t.equal(first.scopes, second.scopes)
  t.same(Object.keys(first).sort(), ['clientId', 'expiresAt', 'issuer', 'organizationId', 'scopes', 'subject', 'tokenId', 'tokenType'])
})

t.test('a narrowed principal is built once per account version, and the cached one is returned as is otherwise', async (t) => {
  const verifier = newVerifier()
  const token = await mint(key, serviceClaims())
  const whole = await verifier.verify(token, config, snapshot.indexes)
  t.equal(await verifier.verify(token, config, snapshot.indexes), whole)

  const narrowedConfig = structuredClone(config)
  ;(narrowedConfig.service_accounts.find((a) => a.client_id === 'svc_pay') as { scopes: string[] }).scopes = ['commerce:payment-intents.read']
  const narrowedIndexes = snapshotOf(narrowedConfig).indexes
  const narrowed = await verifier.verify(token, narrowedConfig, narrowedIndexes)
  t.same([...narrowed.scopes], ['commerce:payment-intents.read'])
  t.equal(await verifier.verify(token, narrowedConfig, narrowedIndexes), narrowed)
  t.same([...whole.scopes].sort(), ['commerce:payment-intents.create', 'commerce:payment-intents.read'])

  const again = structuredClone(narrowedConfig)
  ;(again.service_accounts.find((a) => a.client_id === 'svc_pay') as { scopes: string[] }).scopes = ['commerce:payment-intents.create']
  const renarrowed = await verifier.verify(token, again, snapshotOf(again).indexes)
  t.same([...renarrowed.scopes], ['commerce:payment-intents.create'])
})

t.test('a cached token is checked against the accounts of each snapshot it is used under, never one it was used under before', async (t) => {
  // The entry keeps the principal its last snapshot's accounts gave: a request under any other snapshot checks again.
  const verifier = newVerifier()
  const token = await mint(key, serviceClaims())
  const scopesUnder = async (c: typeof config, indexes = snapshotOf(c).indexes) => [...(await verifier.verify(token, c, indexes)).scopes].sort()
  const whole = ['commerce:payment-intents.create', 'commerce:payment-intents.read']
  t.same(await scopesUnder(config, snapshot.indexes), whole)
  const narrowedConfig = structuredClone(config)
  ;(narrowedConfig.service_accounts.find((a) => a.client_id === 'svc_pay') as { scopes: string[] }).scopes = ['commerce:payment-intents.read']
  const narrowedIndexes = snapshotOf(narrowedConfig).indexes
  t.same(await scopesUnder(narrowedConfig, narrowedIndexes), ['commerce:payment-intents.read'])
  t.same(await scopesUnder(narrowedConfig, narrowedIndexes), ['commerce:payment-intents.read'], 'the same snapshot again')
  t.same(await scopesUnder(config, snapshot.indexes), whole, 'back to the first snapshot')
  const revoked = structuredClone(config)
  ;(revoked.service_accounts.find((a) => a.client_id === 'svc_pay') as { status: string }).status = 'revoked'
  const revokedIndexes = snapshotOf(revoked).indexes
  await t.rejects(verifier.verify(token, revoked, revokedIndexes), { code: 'unauthenticated' })
  t.same(await scopesUnder(narrowedConfig, narrowedIndexes), ['commerce:payment-intents.read'], 'the narrowing snapshot once more')
  await t.rejects(verifier.verify(token, revoked, revokedIndexes), { code: 'unauthenticated' }, 'revoked, still')
})

t.test('a malformed token is refused before verification, cached or not', async (t) => {
  const verifier = newVerifier()
  const token = await mint(key, serviceClaims())
  await verifier.verify(token, config, snapshot.indexes)
  await t.rejects(verifier.verify(`${token}!`, config, snapshot.indexes), {
    code: 'unauthenticated',
    headers: { 'WWW-Authenticate': 'Bearer realm="lanegate", error="invalid_token", error_description="The access token is malformed"' },
  })
})

t.test('cache lifetimes of long-lived tokens spread over the last 20 % of ten minutes; short-lived tokens keep theirs', async (t) => {
  const hour = 3_600_000
  t.equal(cacheLifetimeMs(hour, 0), 600_000, 'at most ten minutes')
  t.equal(cacheLifetimeMs(hour, 0.5), 540_000)
  t.equal(cacheLifetimeMs(hour, 0.999_999), 480_000, 'at least eight minutes')
  t.equal(cacheLifetimeMs(90_000, 0.999_999), 90_000, 'a token expiring sooner is cached until it expires')
  t.equal(cacheLifetimeMs(0.5, 0), 0, 'an expiring token is not cached')
  // Many first-seen tokens at once do not all come due in the same second.
  const dueSeconds = new Set(Array.from({ length: 1000 }, () => Math.floor(cacheLifetimeMs(hour) / 1000)))
  t.ok(dueSeconds.size > 60, `1,000 lifetimes fall in ${dueSeconds.size} distinct seconds`)
  t.ok([...dueSeconds].every((second) => second >= 480 && second <= 600))
})

/** A key store whose published keys the test can change, counting the signature checks' key lookups. */
function retirableKeyStore () {
  const base = keyStoreOf(key)
  let published = base.jwks().keys
  let resolveKey = createLocalJWKSet({ keys: published })
  const store = {
    lookups: 0,
    keys: {
      ...base,
      jwks: () => ({ keys: published }),
      resolve: (...args: Parameters<typeof base.resolve>) => { store.lookups++; return resolveKey(...args) },
    },
    retire () {
      published = []
      resolveKey = createLocalJWKSet({ keys: published })
    },
  }
  return store
}

/** Moves Date.now past the longest cache time for the rest of the test (the one-hour token still lives). */
function pastCacheTime (t: Test): void {
  const realNow = Date.now
  const start = realNow()
  t.teardown(() => { Date.now = realNow })
  Date.now = () => start + 10 * 60_000 + 1_000
}

t.test('a gateway token whose cache time ran out is renewed without a signature check while its key is published', async (t) => {
  const store = retirableKeyStore()
  const verifier = createTokenVerifier({ keys: store.keys, logger: silentLogger })
  const token = await mint(key, serviceClaims())
  const first = await verifier.verify(token, config, snapshot.indexes)
  t.equal(store.lookups, 1, 'verified once')
  pastCacheTime(t)
  const renewed = verifier.verifyFast(token, config, snapshot.indexes)
  t.notOk(renewed instanceof Promise, 'renewed synchronously')
  t.equal(renewed, first, 'the cached principal')
  t.equal(store.lookups, 1, 'no second signature check')
})

t.test('a gateway token whose cache time ran out after its key was retired is verified again, and fails', async (t) => {
  const store = retirableKeyStore()
  const verifier = createTokenVerifier({ keys: store.keys, logger: silentLogger })
  const token = await mint(key, serviceClaims())
  await verifier.verify(token, config, snapshot.indexes)
  store.retire()
  t.equal((await verifier.verify(token, config, snapshot.indexes)).clientId, 'svc_pay', 'still cached before its cache time runs out')
  pastCacheTime(t)
  await t.rejects(verifier.verify(token, config, snapshot.indexes), { code: 'unauthenticated' })
  t.equal(store.lookups, 2, 'its signature was checked again')
})

t.test('a connection\'s remembered token serves only that exact token: a same-length token differing in one character is verified (and fails)', async (t) => {
  const verifier = newVerifier()
  const token = await mint(key, serviceClaims())
  const slot = {}
  t.equal((await verifier.verifyFast(token, config, snapshot.indexes, slot)).clientId, 'svc_pay')
  t.equal((verifier.verifyFast(token, config, snapshot.indexes, slot) as { clientId: string }).clientId, 'svc_pay', 'the remembered token answers synchronously')
  // The signature's first character: its last one may carry only padding bits, which base64url decoding drops, and a
  // change there left the very same signature (the test then failed about one run in four).
  const at = token.lastIndexOf('.') + 1
  const flipped = `${token.slice(0, at)}${token[at] === 'A' ? 'B' : 'A'}${token.slice(at + 1)}`
  // The same low byte as that character: a latin1 comparison would take this for the remembered token.
  const wide = `${token.slice(0, at)}${String.fromCharCode(token.charCodeAt(at) + 256)}${token.slice(at + 1)}`
  for (const other of [flipped, wide]) {
    t.equal(other.length, token.length)
    await t.rejects(async () => await verifier.verifyFast(other, config, snapshot.indexes, slot), { code: 'unauthenticated' })
  }
})
