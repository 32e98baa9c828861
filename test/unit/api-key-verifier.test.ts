import { createHash } from 'node:crypto'
import t from 'tap'
import { createApiKeyVerifier } from '../../src/auth/api-key-verifier.js'
import { buildIndexes } from '../../src/config/indexes.js'
import { parseGatewayConfig } from '../../src/config/second-pass/load-gateway-config.js'
import { verifySecret, type ParsedSecretHash } from '../../src/secrets/secret-hash.js'
import type { ApiKeySlot } from '../../src/plugin/index.js'
import { apiKeyConfig, apiKeyHashes, KEYS } from '../helpers/api-key-config.js'

const hashes = await apiKeyHashes()
async function snapshot (options: Partial<Parameters<typeof apiKeyConfig>[0]> = {}) {
  const { config } = await parseGatewayConfig(apiKeyConfig({ hashes, backend: 'http://127.0.0.1:9', ...options }), 'gateway.yaml', { env: {} })
  return { config, indexes: buildIndexes(config) }
}
const { config, indexes } = await snapshot()

/** A verify that counts its scrypt runs. */
function counting () {
  const calls = { n: 0 }
  return { calls, verify: async (key: string, hash: ParsedSecretHash) => { calls.n++; return verifySecret(key, hash) } }
}

t.test('a verified key answers synchronously from the cache: one scrypt run, the account\'s principal', async (t) => {
  const { calls, verify } = counting()
  const keys = createApiKeyVerifier({ verify })
  const first = keys.verify(KEYS.till, config, indexes)
  t.ok(first instanceof Promise, 'first sight is checked')
  const principal = await first
  t.match(principal, { tokenType: 'service', clientId: 'till-legacy', subject: 'till-legacy', organizationId: 'org_hq_demo', issuer: 'http://localhost:8080' })
  t.same([...(principal as unknown as { scopes: Set<string> }).scopes], ['pricing:read', 'exchange:live.read'])
  const runs = calls.n
  const again = keys.verify(KEYS.till, config, indexes)
  t.equal(again, principal, 'the same principal object, synchronously')
  t.equal(calls.n, runs, 'no scrypt run on a hit')
})

t.test('a wrong key costs scrypt once per declared key, then nothing while the key set is the same', async (t) => {
  const { calls, verify } = counting()
  const keys = createApiKeyVerifier({ verify })
  t.equal(await keys.verify('nobody-s-key', config, indexes), 'invalid')
  t.equal(calls.n, 3, 'checked against the 3 declared keys')
  t.equal(keys.verify('nobody-s-key', config, indexes), 'invalid', 'remembered, synchronously')
  t.equal(calls.n, 3)
  t.equal(keys.verify('', config, indexes), 'invalid')
  t.equal(keys.verify('k'.repeat(600), config, indexes), 'invalid')
  t.equal(calls.n, 3, 'empty and overlong keys cost no scrypt')
})

t.test('concurrent requests with one new key share one check', async (t) => {
  const { calls, verify } = counting()
  const keys = createApiKeyVerifier({ verify })
  const results = await Promise.all(Array.from({ length: 20 }, () => keys.verify(KEYS.other, config, indexes)))
  t.ok(results.every((r) => typeof r === 'object' && r.clientId === 'till-other'))
  t.ok(calls.n <= 3, `one check (${calls.n} scrypt runs)`)
})

t.test('a flood of distinct wrong keys gets at most maxConcurrent runs at once and maxQueued waiting; the rest are busy at once; a verified key still answers from the cache', async (t) => {
  let running = 0
  let most = 0
  const gates: (() => void)[] = []
  const keys = createApiKeyVerifier({
    maxConcurrent: 2,
    maxQueued: 3,
    // A stand-in for scrypt that finishes when the test says so; only KEYS.till matches (the first declared hash).
    verify: async (key) => {
      running++
      most = Math.max(most, running)
      await new Promise<void>((resolve) => gates.push(resolve))
      running--
      return key === KEYS.till
    },
  })
  async function drain (answers: unknown[]): Promise<unknown[]> {
    let settled = false
    const all = Promise.all(answers).finally(() => { settled = true })
    while (!settled) {
      gates.shift()?.()
      await new Promise((resolve) => setImmediate(resolve))
    }
    return all
  }
  const [cached] = await drain([keys.verify(KEYS.till, config, indexes)])
  t.match(cached, { clientId: 'till-legacy' })

  const answers = Array.from({ length: 20 }, (_, i) => keys.verify(`flood-${i}`, config, indexes))
  t.equal(answers.filter((a) => a === 'busy').length, 15, '2 running + 3 queued; the other 15 answered busy synchronously')
  t.equal(keys.verify(KEYS.till, config, indexes), cached, 'a verified key is answered synchronously during the flood')
  const settled = await drain(answers)
  t.equal(settled.filter((a) => a === 'invalid').length, 5)
  t.equal(most, 2, 'never more than 2 scrypt runs at once')
})

t.test('a reload that removes the key or revokes the account stops a cached key at once', async (t) => {
  const keys = createApiKeyVerifier()
  t.match(await keys.verify(KEYS.tillOld, config, indexes), { clientId: 'till-legacy' })
  const revoked = await snapshot({ tillStatus: 'revoked' })
  t.equal(keys.verify(KEYS.tillOld, revoked.config, revoked.indexes), 'revoked', 'synchronously, from the cache')
  const removed = await snapshot({ withOldKey: false })
  t.equal(await keys.verify(KEYS.tillOld, removed.config, removed.indexes), 'invalid')
  t.match(await keys.verify(KEYS.till, removed.config, removed.indexes), { clientId: 'till-legacy' })
})

/** A digest that counts its calls: the slot's whole point is that a remembered key computes none. */
function countingDigest () {
  const digests = { n: 0 }
  return { digests, digest: (key: string) => { digests.n++; return createHash('sha256').update(key).digest('base64url') } }
}

t.test('a connection\'s slot answers its last key again with no digest; another key on it is digested and judged on its own', async (t) => {
  const { digests, digest } = countingDigest()
  const keys = createApiKeyVerifier({ digest })
  const slot: ApiKeySlot = {}
  const principal = await keys.verify(KEYS.till, config, indexes, slot)
  t.match(principal, { clientId: 'till-legacy' })
  const before = digests.n
  t.equal(keys.verify(KEYS.till, config, indexes, slot), principal, 'the same principal, synchronously')
  t.equal(keys.verify(KEYS.till, config, indexes, slot), principal)
  t.equal(digests.n, before, 'no digest for the remembered key')

  // The same length, one character apart (and equal in its low byte: latin1 would see the same bytes).
  const lookalike = KEYS.till.slice(0, -1) + String.fromCharCode(KEYS.till.charCodeAt(KEYS.till.length - 1) + 0x100)
  t.equal(await keys.verify(lookalike, config, indexes, slot), 'invalid', 'a look-alike key is not answered from the slot')
  t.equal(digests.n, before + 1)
  t.match(await keys.verify(KEYS.other, config, indexes, slot), { clientId: 'till-other' }, 'another account\'s key on the same connection')
  t.equal(slot.key, KEYS.other, 'the slot now holds the last accepted key only')
  const after = digests.n
  t.match(keys.verify(KEYS.other, config, indexes, slot), { clientId: 'till-other' })
  t.equal(digests.n, after)
  t.match(keys.verify(KEYS.till, config, indexes, slot), { clientId: 'till-legacy' }, 'the first key again: from the digest cache')
  t.equal(digests.n, after + 1)
})

t.test('a slot filled before a reload is checked against the new snapshot: revoked, then removed', async (t) => {
  const { digests, digest } = countingDigest()
  const keys = createApiKeyVerifier({ digest })
  const slot: ApiKeySlot = {}
  t.match(await keys.verify(KEYS.tillOld, config, indexes, slot), { clientId: 'till-legacy' })
  const active = await snapshot()
  const before = digests.n
  t.match(keys.verify(KEYS.tillOld, active.config, active.indexes, slot), { clientId: 'till-legacy' }, 'a reload that changed nothing of the account')
  t.equal(digests.n, before, 're-checked without a digest')
  const revoked = await snapshot({ tillStatus: 'revoked' })
  t.equal(keys.verify(KEYS.tillOld, revoked.config, revoked.indexes, slot), 'revoked', 'a revoked account is refused at once')
  t.equal(slot.key, undefined, 'and the slot forgets the key')
  t.match(await keys.verify(KEYS.tillOld, active.config, active.indexes, slot), { clientId: 'till-legacy' })
  const removed = await snapshot({ withOldKey: false })
  t.equal(await keys.verify(KEYS.tillOld, removed.config, removed.indexes, slot), 'invalid', 'a key removed by a reload is refused')
  t.equal(slot.key, undefined)
})

t.test('an api_keys hash that is not a PHC string is a config error at its path', async (t) => {
  const text = apiKeyConfig({ hashes: { ...hashes, other: 'plain-text-key' }, backend: 'http://127.0.0.1:9' })
  await t.rejects(parseGatewayConfig(text, 'gateway.yaml', { env: {} }), /service_accounts\[1\]\.api_keys\[0\]\.hash: not a scrypt PHC hash/)
})
