import t from 'tap'
import { createApiKeyVerifier } from '../../src/auth/api-key-verifier.js'
import { buildIndexes } from '../../src/config/indexes.js'
import { parseGatewayConfig } from '../../src/pipeline/load-gateway-config.js'
import { verifySecret, type ParsedSecretHash } from '../../src/oauth/secret-hash.js'
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

t.test('an api_keys hash that is not a PHC string is a config error at its path', async (t) => {
  const text = apiKeyConfig({ hashes: { ...hashes, other: 'plain-text-key' }, backend: 'http://127.0.0.1:9' })
  await t.rejects(parseGatewayConfig(text, 'gateway.yaml', { env: {} }), /service_accounts\[1\]\.api_keys\[0\]\.hash: not a scrypt PHC hash/)
})
