import t from 'tap'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { createTokenVerifier } from '../../src/auth/token-verifier.js'
import { silentLogger } from '../helpers/token-app.js'
import { snapshotOf, testConfig } from '../helpers/token-config.js'
import { generateTestKey, keyStoreOf, mint, serviceClaims } from '../helpers/token-mint.js'

// The verifier caches up to 100k verifications, so their size is most of the gateway's memory under many clients
// (issue 6: RSS ≤ 200 MB after 1M requests over 100k tokens). A heap snapshot of that run once found every cached
// entry with a hidden class of its own (an object spread per entry): ~240 bytes more per token than the fields.
setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

const tokens = 4000
/**
 * Bytes of live heap per cached verification, as this test measures them: 118-145 with one hidden class shared
 * by every entry, 384-396 with a hidden class per entry. The bound sits between the two.
 */
const maxBytesPerToken = 260

t.test('a cached verification costs a bounded number of heap bytes (no hidden class per entry)', async (t) => {
  const key = await generateTestKey('k1')
  const config = testConfig({ keys: [] })
  const snapshot = snapshotOf(config)
  const minted: string[] = []
  for (let i = 0; i < tokens; i++) minted.push(await mint(key, serviceClaims()))
  /** Live heap with a verifier that has verified (and cached) the first `count` tokens. */
  async function heapWith (count: number): Promise<number> {
    const verifier = createTokenVerifier({ keys: keyStoreOf(key), logger: silentLogger })
    for (const token of minted.slice(0, count)) await verifier.verify(token, config, snapshot.indexes)
    // Every token is still cached: a second pass is answered without a promise.
    t.notOk(minted.slice(0, count).some((token) => verifier.verifyFast(token, config, snapshot.indexes) instanceof Promise))
    gc()
    return process.memoryUsage().heapUsed
  }
  // The difference between two verifiers that cached 1 and all tokens: the shared parts (interned claims, the
  // signer, compiled code) and the test's own garbage are in both.
  await heapWith(1)
  const one = await heapWith(1)
  const all = await heapWith(tokens)
  const perToken = (all - one) / (tokens - 1)
  t.ok(perToken < maxBytesPerToken, `${perToken.toFixed(0)} bytes per cached token (bound ${maxBytesPerToken})`)
})
