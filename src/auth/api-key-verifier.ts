import { createHmac, randomBytes } from 'node:crypto'
import { LRUCache } from 'lru-cache'
import type { ConfigIndexes } from '../config/indexes.js'
import type { GatewayConfig, ServiceAccountConfig, ServiceAccountSecret } from '../config/types.js'
import { parseSecretHash, verifySecret, type ParsedSecretHash } from '../oauth/secret-hash.js'
import type { Principal } from '../runtime/request-context.js'
import type { ApiKeyFailure, ApiKeySlot, ApiKeyVerifier } from '../runtime/shared-resources.js'
import { RememberedSecret } from './same-secret.js'

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
 * What a connection's slot remembers beside the key: the answer it got and the snapshot it got it in (by number,
 * so an idle connection does not keep an old snapshot alive), and whose key it was, to re-check after a reload.
 */
interface SlotEntry {
  /** The slot's key, encoded once for the constant-time comparison. */
  readonly secret: RememberedSecret
  readonly snapshot: number
  readonly known: VerifiedKey
  readonly principal: Principal
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
 * - the caller's `slot` (one per connection) remembers the last key accepted there by its exact text: the same key
 *   again in the same snapshot costs one constant-time comparison, and no digest or lookup. In another snapshot
 *   (a reload) the account and its declared hash are checked again as above, still without the digest;
 * - a wrong key is remembered too (by digest, for the snapshot it failed in), so repeating it is free;
 * - first-seen keys share `maxConcurrent` scrypt runs; `maxQueued` more wait; any beyond are answered `busy`
 *   without scrypt work. A flood of distinct wrong keys therefore takes at most `maxConcurrent` threads, while
 *   keys already verified keep being answered from the cache.
 *
 * Long by design: a factory whose short named closures share the caches, the per-snapshot indexes and the scrypt
 * slots.
 */
export function createApiKeyVerifier (options: ApiKeyVerifierOptions = {}): ApiKeyVerifier {
  const hmacKey = randomBytes(32)
  const digestOf = options.digest ?? function hmacDigest (key: string): string { return createHmac('sha256', hmacKey).update(key).digest('base64url') }
  const verified = new LRUCache<string, VerifiedKey>({ max: options.cacheSize ?? 10_000 })
  const refused = new LRUCache<string, KeyIndex>({ max: options.negativeCacheSize ?? 10_000, ttl: options.negativeTtlMs ?? 10 * 60_000 })
  const verify = options.verify ?? verifySecret
  const maxConcurrent = options.maxConcurrent ?? 1
  const maxQueued = options.maxQueued ?? 32
  const inFlight = new Map<string, Promise<DeclaredKey | undefined>>()
  const waiting: (() => void)[] = []
  let running = 0

  const indexes = new WeakMap<ConfigIndexes, KeyIndex>()
  const snapshots = new WeakMap<ConfigIndexes, number>()
  let snapshotCount = 0
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
        // plugins/scope reads this marker: a key's caller gets no Bearer challenge.
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

  /** A key verified before, checked against this snapshot: undefined when its account no longer declares its hash. */
  function recheck (known: VerifiedKey, config: GatewayConfig, configIndexes: ConfigIndexes): Principal | ApiKeyFailure | undefined {
    const account = configIndexes.accounts.get(known.clientId)
    if (account === undefined || !declares(account, known.hash)) return undefined
    return outcomeFor(account, config)
  }

  /** A number per snapshot (its indexes), for the slots: equal numbers, the same accounts and keys. */
  function snapshotOf (configIndexes: ConfigIndexes): number {
    let n = snapshots.get(configIndexes)
    if (n === undefined) snapshots.set(configIndexes, n = ++snapshotCount)
    return n
  }

  /** The connection remembers an accepted key; anything else (revoked) empties its slot. */
  function remember (slot: ApiKeySlot | undefined, key: string, known: VerifiedKey, configIndexes: ConfigIndexes, outcome: Principal | ApiKeyFailure): void {
    if (slot === undefined) return
    if (typeof outcome === 'string') {
      slot.key = slot.entry = undefined
      return
    }
    // The same key again (a reload re-checked it): its encoding is kept.
    const previous = slot.entry as SlotEntry | undefined
    const secret = previous !== undefined && previous.secret.matches(key) ? previous.secret : new RememberedSecret(key)
    const entry: SlotEntry = { secret, snapshot: snapshotOf(configIndexes), known, principal: outcome }
    slot.key = key
    slot.entry = entry
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
      if (running >= maxConcurrent && waiting.length >= maxQueued) return 'busy'
      pending = checkKey(key, digest, index).finally(() => inFlight.delete(digest))
      inFlight.set(digest, pending)
    }
    return pending.then(function firstSeenChecked (found) {
      if (found === undefined) return 'invalid'
      const outcome = outcomeFor(found.account, config)
      remember(slot, key, knownOf(found), configIndexes, outcome)
      return outcome
    })
  }

  return {
    verify (key, config, configIndexes, slot) {
      if (key.length === 0 || key.length > MAX_KEY_LENGTH) return 'invalid'
      const entry = slot?.entry as SlotEntry | undefined
      if (slot !== undefined && entry !== undefined && entry.secret.matches(key)) {
        // Remembered in this very snapshot: the same account objects, so the same answer.
        if (entry.snapshot === snapshots.get(configIndexes)) return entry.principal
        const outcome = recheck(entry.known, config, configIndexes)
        if (outcome !== undefined) {
          remember(slot, key, entry.known, configIndexes, outcome)
          return outcome
        }
        // A reload removed the key (or its account): the slot forgets it, and the digest path below decides.
        slot.key = slot.entry = undefined
      }
      const digest = digestOf(key)
      const known = verified.get(digest)
      if (known !== undefined) {
        const outcome = recheck(known, config, configIndexes)
        if (outcome !== undefined) {
          remember(slot, key, known, configIndexes, outcome)
          return outcome
        }
        // The key (or its account) left gateway.yaml: forget it, and check it like any new key.
        verified.delete(digest)
      }
      const index = keyIndexOf(config, configIndexes)
      if (index.keys.length === 0 || refused.get(digest) === index) return 'invalid'
      return verifyFirstSeen(key, digest, config, configIndexes, index, slot)
    },
  }
}

/** What the caches remember of a declared key that matched. */
function knownOf (found: DeclaredKey): VerifiedKey {
  return { clientId: found.account.client_id, hash: found.key.hash }
}
