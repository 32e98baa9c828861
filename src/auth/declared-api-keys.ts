import type { ConfigIndexes } from '../config/indexes.js'
import type { GatewayConfig, ServiceAccountConfig, ServiceAccountSecret } from '../config/types.js'
import type { Principal } from '../runtime/request-context.js'
import type { ApiKeyFailure, ApiKeySlot } from '../runtime/shared-resources.js'
import { parseSecretHash, type ParsedSecretHash } from '../secrets/secret-hash.js'
import { RememberedSecret } from '../secrets/same-secret.js'

/** One declared key of one account, parsed once per config snapshot. */
export interface DeclaredKey {
  readonly account: ServiceAccountConfig
  readonly key: ServiceAccountSecret
  readonly parsed: ParsedSecretHash
}

/** The declared keys of one snapshot; its identity also dates the negative cache's entries. */
export interface KeyIndex {
  readonly keys: readonly DeclaredKey[]
}

/** What the verified-key cache remembers: whose key it was, and which declared hash it matched. */
export interface VerifiedKey {
  readonly clientId: string
  readonly hash: string
}

/**
 * What a connection's slot remembers beside the key: the answer it got and the snapshot it got it in (by number,
 * so an idle connection does not keep an old snapshot alive), and whose key it was, to re-check after a reload.
 */
export interface SlotEntry {
  /** The slot's key, encoded once for the constant-time comparison. */
  readonly secret: RememberedSecret
  readonly snapshot: number
  readonly known: VerifiedKey
  readonly principal: Principal
}

/**
 * What the API-key verifier derives from each config snapshot and its accounts, built once per object (a reload
 * brings new ones; WeakMaps let the old go): the declared keys, the principal each account's key gives, and a
 * number per snapshot for the connections' slots.
 */
export class DeclaredApiKeys {
  private readonly indexes = new WeakMap<ConfigIndexes, KeyIndex>()
  private readonly snapshots = new WeakMap<ConfigIndexes, number>()
  private snapshotCount = 0
  private readonly principals = new WeakMap<ServiceAccountConfig, Principal>()
  private readonly hashSets = new WeakMap<ServiceAccountConfig, ReadonlySet<string>>()

  /**
   * The answer the connection's slot remembers for `key`: in this very snapshot as it was (the same account
   * objects, so the same answer), after a reload re-checked against the account. Undefined when the slot holds
   * another key, or a reload removed this one (the slot then forgets it, and the digest path decides).
   */
  fromSlot (slot: ApiKeySlot, key: string, config: GatewayConfig, configIndexes: ConfigIndexes): Principal | ApiKeyFailure | undefined {
    const entry = slot.entry as SlotEntry | undefined
    if (entry === undefined || !entry.secret.matches(key)) return undefined
    if (entry.snapshot === this.snapshots.get(configIndexes)) return entry.principal
    const outcome = this.recheck(entry.known, config, configIndexes)
    if (outcome !== undefined) {
      this.remember(slot, key, entry.known, configIndexes, outcome)
      return outcome
    }
    slot.key = slot.entry = undefined
    return undefined
  }

  keyIndexOf (config: GatewayConfig, configIndexes: ConfigIndexes): KeyIndex {
    let index = this.indexes.get(configIndexes)
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
      this.indexes.set(configIndexes, index)
    }
    return index
  }

  /** The principal an account's key gives, built once per account object (a reload brings new ones). */
  private principalOf (account: ServiceAccountConfig, config: GatewayConfig): Principal {
    let principal = this.principals.get(account)
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
      this.principals.set(account, principal)
    }
    return principal
  }

  private declares (account: ServiceAccountConfig, hash: string): boolean {
    let set = this.hashSets.get(account)
    if (set === undefined) {
      set = new Set(account.api_keys.map((k) => k.hash))
      this.hashSets.set(account, set)
    }
    return set.has(hash)
  }

  outcomeFor (account: ServiceAccountConfig, config: GatewayConfig): Principal | ApiKeyFailure {
    return account.status === 'active' ? this.principalOf(account, config) : 'revoked'
  }

  /** A key verified before, checked against this snapshot: undefined when its account no longer declares its hash. */
  recheck (known: VerifiedKey, config: GatewayConfig, configIndexes: ConfigIndexes): Principal | ApiKeyFailure | undefined {
    const account = configIndexes.accounts.get(known.clientId)
    if (account === undefined || !this.declares(account, known.hash)) return undefined
    return this.outcomeFor(account, config)
  }

  /** A number per snapshot (its indexes), for the slots: equal numbers, the same accounts and keys. */
  private snapshotOf (configIndexes: ConfigIndexes): number {
    let n = this.snapshots.get(configIndexes)
    if (n === undefined) this.snapshots.set(configIndexes, n = ++this.snapshotCount)
    return n
  }

  /** The connection remembers an accepted key; anything else (revoked) empties its slot. */
  remember (slot: ApiKeySlot | undefined, key: string, known: VerifiedKey, configIndexes: ConfigIndexes, outcome: Principal | ApiKeyFailure): void {
    if (slot === undefined) return
    if (typeof outcome === 'string') {
      slot.key = slot.entry = undefined
      return
    }
    // The same key again (a reload re-checked it): its encoding is kept.
    const previous = slot.entry as SlotEntry | undefined
    const secret = previous !== undefined && previous.secret.matches(key) ? previous.secret : new RememberedSecret(key)
    const entry: SlotEntry = { secret, snapshot: this.snapshotOf(configIndexes), known, principal: outcome }
    slot.key = key
    slot.entry = entry
  }
}

/** What the caches remember of a declared key that matched. */
export function knownOf (found: DeclaredKey): VerifiedKey {
  return { clientId: found.account.client_id, hash: found.key.hash }
}
