import { createHmac, randomBytes } from 'node:crypto'
import { LRUCache } from 'lru-cache'
import type { ConfigIndexes } from '../config/indexes.js'
import type { GatewayConfig } from '../config/types.js'
import { verifySecret, type ParsedSecretHash } from '../secrets/secret-hash.js'
import type { Principal } from '../runtime/request-context.js'
import type { ApiKeyFailure, ApiKeySlot, ApiKeyVerifier } from '../runtime/shared-resources.js'
import { DeclaredApiKeys, knownOf, type DeclaredKey, type KeyIndex, type VerifiedKey } from './declared-api-keys.js'
import { ScryptSlots } from './scrypt-slots.js'

export interface ApiKeyVerifierOptions {
  /** Verified keys remembered (LRU, by digest). */
  cacheSize?: number
  /** Wrong keys remembered (LRU, by digest), so a repeated wrong key costs no scrypt run. */
  negativeCacheSize?: number
  /** How long a wrong key is remembered (ms); a reload forgets them all anyway. */
  negativeTtlMs?: number
  /** scrypt runs at once, for every key not yet seen: what a flood of wrong keys can take of the CPU. */
  maxConcurrent?: number
  /** Keys waiting for a run; beyond this a first-seen key is answered `busy` (503) without any scrypt work. */
  maxQueued?: number
  /** The scrypt check (tests count calls); defaults to `verifySecret`. */
  verify?: (key: string, hash: ParsedSecretHash) => Promise<boolean>
  /** The key's digest, the caches' key (tests count calls); defaults to HMAC-SHA256 with a process-random key. */
  digest?: (key: string) => string
}

/** Keys longer than this are refused without a digest or scrypt run (a generated key is 43 characters). */
const MAX_KEY_LENGTH = 512

/**
 * Verifies API keys (`api-key` policy) against the scrypt hashes declared under `service_accounts[].api_keys`.
 *
 * A key carries no account id, so a key seen for the first time is checked against every declared hash (scrypt,
 * ~70 ms each, in libuv's pool). Then:
 * - a verified key is remembered by HMAC-SHA256(process-random key, presented key): later requests cost one
 *   digest and map lookups, synchronously. On every hit the request's snapshot is consulted: the account must
 *   still declare that hash (else the entry is dropped: a key removed by a reload stops working at once) and be
 *   active (else `revoked`);
 * - the caller's `slot` (one per connection) remembers the last key accepted there by its exact text: the same key
 *   again in the same snapshot costs one constant-time comparison, and no digest or lookup. In another snapshot
 *   (a reload) the account and its declared hash are checked again as above, still without the digest;
 * - a wrong key is remembered too (by digest, for the snapshot it failed in), so repeating it is free;
 * - first-seen keys share `maxConcurrent` scrypt runs; `maxQueued` more wait; any beyond are answered `busy`
 *   without scrypt work. A flood of distinct wrong keys therefore takes at most `maxConcurrent` threads, while
 *   keys already verified keep being answered from the cache.
 */
export function createApiKeyVerifier (options: ApiKeyVerifierOptions = {}): ApiKeyVerifier {
  const hmacKey = randomBytes(32)
  const digestOf = options.digest ?? function hmacDigest (key: string): string { return createHmac('sha256', hmacKey).update(key).digest('base64url') }
  const verified = new LRUCache<string, VerifiedKey>({ max: options.cacheSize ?? 10_000 })
  // ttlResolution 0: each lookup reads the clock, and no timer is armed (the default 1 ms one runs per lookup).
  const refused = new LRUCache<string, KeyIndex>({ max: options.negativeCacheSize ?? 10_000, ttl: options.negativeTtlMs ?? 10 * 60_000, ttlResolution: 0 })
  const verify = options.verify ?? verifySecret
  const maxConcurrent = options.maxConcurrent ?? 1
  const maxQueued = options.maxQueued ?? 32
  const inFlight = new Map<string, Promise<DeclaredKey | undefined>>()
  const slots = new ScryptSlots(maxConcurrent, maxQueued)
  const accounts = new DeclaredApiKeys()

  /**
   * Checks the key against each declared hash in turn, in one slot, stopping at the first match, and remembers
   * the answer (a verified key by account and hash; a wrong key for this snapshot's key set).
   */
  async function checkKey (key: string, digest: string, index: KeyIndex): Promise<DeclaredKey | undefined> {
    await slots.acquire()
    let found: DeclaredKey | undefined
    try {
      for (const declared of index.keys) {
        if (await verify(key, declared.parsed)) {
          found = declared
          break
        }
      }
    } finally {
      slots.release()
    }
    if (found === undefined) refused.set(digest, index)
    else verified.set(digest, knownOf(found))
    return found
  }

  /**
   * A key not in either cache: concurrent requests with the same key share one check. With every slot taken and
   * the queue full it is `busy` at once, without scrypt work.
   */
  function verifyFirstSeen (key: string, digest: string, config: GatewayConfig, configIndexes: ConfigIndexes, index: KeyIndex, slot: ApiKeySlot | undefined): Promise<Principal | ApiKeyFailure> | ApiKeyFailure {
    let pending = inFlight.get(digest)
    if (pending === undefined) {
      if (slots.full()) return 'busy'
      pending = checkKey(key, digest, index).finally(() => inFlight.delete(digest))
      inFlight.set(digest, pending)
    }
    return pending.then(function firstSeenChecked (found) {
      if (found === undefined) return 'invalid'
      const outcome = accounts.outcomeFor(found.account, config)
      accounts.remember(slot, key, knownOf(found), configIndexes, outcome)
      return outcome
    })
  }

  return {
    verify (key, config, configIndexes, slot) {
      if (key.length === 0 || key.length > MAX_KEY_LENGTH) return 'invalid'
      const remembered = slot === undefined ? undefined : accounts.fromSlot(slot, key, config, configIndexes)
      if (remembered !== undefined) return remembered
      const digest = digestOf(key)
      const known = verified.get(digest)
      if (known !== undefined) {
        const outcome = accounts.recheck(known, config, configIndexes)
        if (outcome !== undefined) {
          accounts.remember(slot, key, known, configIndexes, outcome)
          return outcome
        }
        // The key (or its account) left gateway.yaml: forget it, and check it like any new key.
        verified.delete(digest)
      }
      const index = accounts.keyIndexOf(config, configIndexes)
      if (index.keys.length === 0 || refused.get(digest) === index) return 'invalid'
      return verifyFirstSeen(key, digest, config, configIndexes, index, slot)
    },
  }
}
