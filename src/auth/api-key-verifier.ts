import { createHmac, randomBytes } from 'node:crypto'
import { LRUCache } from 'lru-cache'
import type { ConfigIndexes } from '../config/indexes.js'
import type { GatewayConfig, ServiceAccountConfig, ServiceAccountSecret } from '../config/types.js'
import { parseSecretHash, verifySecret, type ParsedSecretHash } from '../oauth/secret-hash.js'
import type { Principal } from '../runtime/request-context.js'
import type { ApiKeyFailure, ApiKeyVerifier } from '../runtime/shared-resources.js'

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
}

/** Keys longer than this are refused without a digest or scrypt run (a generated key is 43 characters). */
const MAX_KEY_LENGTH = 512

/** One declared key of one account, parsed once per config snapshot. */
interface DeclaredKey {
  readonly account: ServiceAccountConfig
  readonly key: ServiceAccountSecret
  readonly parsed: ParsedSecretHash
}

/** The declared keys of one snapshot; its identity also dates the negative cache's entries. */
interface KeyIndex {
  readonly keys: readonly DeclaredKey[]
}

/** What the verified-key cache remembers: whose key it was, and which declared hash it matched. */
interface VerifiedKey {
  readonly clientId: string
  readonly hash: string
}

/**
 * Verifies API keys (`api-key` policy) against the scrypt hashes declared under `service_accounts[].api_keys`.
 *
 * A key carries no account id, so a key seen for the first time is checked against every declared hash (scrypt,
 * ~70 ms each, in libuv's pool). Then:
 * - a verified key is remembered by HMAC-SHA256(process-random key, presented key): later requests cost one
 *   digest and map lookups, synchronously. On every hit the request's snapshot is consulted: the account must
 *   still declare that hash (else the entry is dropped: a key removed by a reload stops working at once) and be
 *   active (else `revoked`);
 * - a wrong key is remembered too (by digest, for the snapshot it failed in), so repeating it is free;
 * - first-seen keys share `maxConcurrent` scrypt runs; `maxQueued` more wait; any beyond are answered `busy`
 *   without scrypt work. A flood of distinct wrong keys therefore takes at most `maxConcurrent` threads, while
 *   keys already verified keep being answered from the cache.
 */
export function createApiKeyVerifier (options: ApiKeyVerifierOptions = {}): ApiKeyVerifier {
  const hmacKey = randomBytes(32)
  const verified = new LRUCache<string, VerifiedKey>({ max: options.cacheSize ?? 10_000 })
  const refused = new LRUCache<string, KeyIndex>({ max: options.negativeCacheSize ?? 10_000, ttl: options.negativeTtlMs ?? 10 * 60_000 })
  const verify = options.verify ?? verifySecret
  const maxConcurrent = options.maxConcurrent ?? 1
  const maxQueued = options.maxQueued ?? 32
  const inFlight = new Map<string, Promise<DeclaredKey | undefined>>()
  const waiting: (() => void)[] = []
  let running = 0

  const indexes = new WeakMap<ConfigIndexes, KeyIndex>()
  const principals = new WeakMap<ServiceAccountConfig, Principal>()
  const hashSets = new WeakMap<ServiceAccountConfig, ReadonlySet<string>>()

  function keyIndexOf (config: GatewayConfig, configIndexes: ConfigIndexes): KeyIndex {
    let index = indexes.get(configIndexes)
    if (index === undefined) {
      const keys: DeclaredKey[] = []
      for (const account of config.service_accounts) {
        for (const key of account.api_keys) {
          const parsed = parseSecretHash(key.hash)
          // Validation rejects malformed hashes; one that slipped through can never match.
          if (parsed !== undefined) keys.push({ account, key, parsed })
        }
      }
      index = { keys }
      indexes.set(configIndexes, index)
    }
    return index
  }

  /** The principal an account's key gives, built once per account object (a reload brings new ones). */
  function principalOf (account: ServiceAccountConfig, config: GatewayConfig): Principal {
    let principal = principals.get(account)
    if (principal === undefined) {
      principal = {
        tokenType: 'service',
        subject: account.client_id,
        clientId: account.client_id,
        organizationId: account.organization,
        scopes: new Set(account.scopes),
        tokenId: 'api-key',
        // A key does not expire; removing it from gateway.yaml (and reloading) ends it.
        expiresAt: Number.MAX_SAFE_INTEGER,
        issuer: config.issuer.issuer,
      }
      principals.set(account, principal)
    }
    return principal
  }

  function declares (account: ServiceAccountConfig, hash: string): boolean {
    let set = hashSets.get(account)
    if (set === undefined) {
      set = new Set(account.api_keys.map((k) => k.hash))
      hashSets.set(account, set)
    }
    return set.has(hash)
  }

  function outcomeFor (account: ServiceAccountConfig, config: GatewayConfig): Principal | ApiKeyFailure {
    return account.status === 'active' ? principalOf(account, config) : 'revoked'
  }

  /** Resolves when one of the `maxConcurrent` scrypt slots is this caller's (the caller checked the queue has room). */
  function acquire (): Promise<void> | undefined {
    if (running < maxConcurrent) {
      running++
      return undefined
    }
    return new Promise((resolve) => waiting.push(resolve))
  }

  /** Hands the slot to the next waiting key, or frees it. */
  function release (): void {
    const next = waiting.shift()
    if (next === undefined) running--
    else next()
  }

  /**
   * Checks the key against each declared hash in turn, in one slot, stopping at the first match, and remembers
   * the answer (a verified key by account and hash; a wrong key for this snapshot's key set).
   */
  async function checkKey (key: string, digest: string, index: KeyIndex): Promise<DeclaredKey | undefined> {
    await acquire()
    let found: DeclaredKey | undefined
    try {
      for (const declared of index.keys) {
        if (await verify(key, declared.parsed)) {
          found = declared
          break
        }
      }
    } finally {
      release()
    }
    if (found === undefined) refused.set(digest, index)
    else verified.set(digest, { clientId: found.account.client_id, hash: found.key.hash })
    return found
  }

  /**
   * A key not in either cache: concurrent requests with the same key share one check. With every slot taken and
   * the queue full it is `busy` at once, without scrypt work.
   */
  function verifyFirstSeen (key: string, digest: string, config: GatewayConfig, index: KeyIndex): Promise<Principal | ApiKeyFailure> | ApiKeyFailure {
    let pending = inFlight.get(digest)
    if (pending === undefined) {
      if (running >= maxConcurrent && waiting.length >= maxQueued) return 'busy'
      pending = checkKey(key, digest, index).finally(() => inFlight.delete(digest))
      inFlight.set(digest, pending)
    }
    return pending.then((found) => found === undefined ? 'invalid' : outcomeFor(found.account, config))
  }

  return {
    verify (key, config, configIndexes) {
      if (key.length === 0 || key.length > MAX_KEY_LENGTH) return 'invalid'
      const digest = createHmac('sha256', hmacKey).update(key).digest('base64url')
      const known = verified.get(digest)
      if (known !== undefined) {
        const account = configIndexes.accounts.get(known.clientId)
        if (account !== undefined && declares(account, known.hash)) return outcomeFor(account, config)
        // The key (or its account) left gateway.yaml: forget it, and check it like any new key.
        verified.delete(digest)
      }
      const index = keyIndexOf(config, configIndexes)
      if (index.keys.length === 0 || refused.get(digest) === index) return 'invalid'
      return verifyFirstSeen(key, digest, config, index)
    },
  }
}
