import { hash } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import { LRUCache } from 'lru-cache'
import type { ConfigIndexes } from '../config/indexes.js'
import type { GatewayConfig } from '../config/types.js'
import type { KeyStore, TokenSlot, TokenVerifier } from '../runtime/shared-resources.js'
import type { Principal } from '../runtime/request-context.js'
import { invalidToken } from './bearer-challenge.js'
import { RememberedSecret } from '../secrets/same-secret.js'
import { createOwnSigners, type OwnSigners } from './own-signers.js'
import { applyServiceAccount } from './token-claims.js'
import { createProfileSource, type DevUserIssuerLoader, type TokenProfile } from './token-profiles.js'
import { signatureVerifier, type Verification } from './verify-signature.js'

export interface TokenVerifierDeps {
  /** The gateway's own keys (service tokens). */
  readonly keys: KeyStore
  readonly logger: FastifyBaseLogger
  /** Public keys of the development user issuer (`user_token_issuers[].development_key_dir`). */
  readonly devUserIssuer?: DevUserIssuerLoader
  /** Most verified tokens kept; default 100,000. */
  readonly cacheSize?: number
}

/** Longer tokens are refused before any parsing; real ones are well under 2 KB. */
const maxTokenLength = 8192
/** A cached verification is dropped after at most this long even if the token lives longer. */
const maxCacheTtlMs = 10 * 60_000
/** How much earlier than maxCacheTtlMs a long-lived token's cache time may run out (a random share of it). */
const cacheTtlSpread = 0.2

/**
 * How long a verification stays cached: until the token expires (plus the clock tolerance), but at most
 * maxCacheTtlMs less a random part of up to 20 %. The spread matters after a restart or a deploy: every client's
 * token is first seen within a few seconds, and with one fixed cap all of them would be verified again in the
 * same few seconds ten minutes later (docs/performance.md, "The tricks in the code"). `random` is in [0, 1).
 */
export function cacheLifetimeMs (untilExpiryMs: number, random: number = Math.random()): number {
  return Math.floor(Math.min(untilExpiryMs, maxCacheTtlMs * (1 - cacheTtlSpread * random)))
}
interface CacheEntry extends Verification {
  /**
   * Epoch ms after which the token is checked again (its expiry, at most maxCacheTtlMs after it was cached).
   * Mutable: a renewal (see verifyFast) moves it on.
   */
  cachedUntilMs: number
  /**
   * The principal as the accounts of one config snapshot's indexes left it (withAccount), and those indexes: the
   * next request of the same snapshot takes it as it is. Accounts never change within a snapshot, and a principal that
   * an account refuses is never kept (withAccount throws). It keeps the indexes of the last snapshot it was used
   * under alive until the entry is used again or leaves the cache: one object per reload, shared by every entry.
   */
  checked: { readonly indexes: ConfigIndexes, readonly principal: Principal } | undefined
}

/**
 * The cache key of a token: its SHA-256 (43 characters) instead of the token itself (650+ characters, and as
 * the auth step hands it over, a slice that keeps the whole `Authorization` header alive). Equal digests mean
 * equal tokens (SHA-256 is collision resistant), so a hit is exactly the token that was verified, which keying
 * by the signature part alone would not give: `<any header>.<any payload>.<a known signature>` would hit.
 */
function cacheKey (token: string): string {
  return hash('sha256', token, 'base64url')
}

/**
 * Creates the bearer-token verifier shared by every snapshot. Successful verifications are cached by the token's
 * digest (never failures, so a bad token cannot poison the cache); on every hit `exp` is checked again and, for
 * service tokens, the request's snapshot decides whether the account is still active. The token itself is never
 * logged.
 */
export function createTokenVerifier (deps: TokenVerifierDeps): TokenVerifier {
  const profilesFor = createProfileSource(deps)
  // No LRU ttl: an entry whose cache time ran out is still needed to renew it (verifyFast); `max` bounds the size.
  const cache = new LRUCache<string, CacheEntry>({ max: deps.cacheSize ?? 100_000 })
  const signers = createOwnSigners(deps.keys)
  const verifySignature = signatureVerifier(deps.logger, signers)

  function forget (slot: TokenSlot | undefined, key: string): void {
    if (slot !== undefined) slot.token = slot.entry = undefined
    cache.delete(key)
  }

  async function verifyAndCache (token: string, key: string, config: GatewayConfig, indexes: ConfigIndexes, profiles: ReadonlyMap<string, TokenProfile>, slot: TokenSlot | undefined): Promise<Principal> {
    const verified = await verifySignature(token, config, profiles)
    const entry = cacheEntryOf(verified, config.issuer.clock_tolerance_seconds)
    if (entry !== undefined) {
      cache.set(key, entry)
      remember(slot, token, entry)
    }
    return withAccount(verified.principal, verified.own, indexes)
  }

  /**
   * A cached token's principal comes back synchronously (no promise on the hot path); a token that is not cached,
   * whose cache time ran out, or that was cached under an issuer's rules a reload changed, is verified (a promise).
   * `slot` (one per connection) remembers the last token by its exact text: a client sends the same token on
   * every request of a keep-alive connection, and then the digest is not computed at all.
   */
  function verifyFast (token: string, config: GatewayConfig, indexes: ConfigIndexes, slot?: TokenSlot): Principal | Promise<Principal> {
    if (token.length > maxTokenLength) throw invalidToken('The access token is malformed')
    const profiles = profilesFor(config)
    const memo = slot?.entry as SlotMemo | undefined
    let entry = memo !== undefined && memo.secret.matches(token) ? memo.cached : undefined
    let key: string | undefined
    if (entry === undefined) {
      key = cacheKey(token)
      entry = cache.get(key)
      if (entry === undefined) return verifyAndCache(token, key, config, indexes, profiles, slot)
      remember(slot, token, entry)
    }
    const now = Date.now()
    // Checked against the request's config: a reload may have lowered the clock tolerance.
    const untilExpiryMs = (entry.principal.expiresAt + config.issuer.clock_tolerance_seconds) * 1000 - now
    if (untilExpiryMs <= 0) {
      forget(slot, key ?? cacheKey(token))
      throw invalidToken('The access token expired')
    }
    const sameRules = profiles.get(entry.principal.issuer)?.fingerprint === entry.fingerprint
    if (sameRules && now >= entry.cachedUntilMs && renewable(entry, signers)) {
      entry.cachedUntilMs = now + cacheLifetimeMs(untilExpiryMs)
    } else if (!sameRules || now >= entry.cachedUntilMs) {
      // The issuer's rules changed with a reload, or the cache time ran out and the token cannot be renewed: verify
      // again.
      key ??= cacheKey(token)
      forget(slot, key)
      return verifyAndCache(token, key, config, indexes, profiles, slot)
    }
    return checkedPrincipal(entry, indexes)
  }

  return {
    verifyFast,
    async verify (token, config, indexes) {
      return await verifyFast(token, config, indexes)
    },
  }
}

/** What a connection's slot holds (`slot.entry`): its last token, encoded once for the comparison, and its entry. */
interface SlotMemo {
  readonly secret: RememberedSecret
  readonly cached: CacheEntry
}

function remember (slot: TokenSlot | undefined, token: string, entry: CacheEntry): void {
  if (slot === undefined) return
  const memo: SlotMemo = { secret: new RememberedSecret(token), cached: entry }
  slot.token = token
  slot.entry = memo
}

/** withAccount for a cached entry, once per config snapshot: three lookups and a loop over the scopes per request before. */
function checkedPrincipal (entry: CacheEntry, indexes: ConfigIndexes): Principal {
  const checked = entry.checked
  if (checked !== undefined && checked.indexes === indexes) return checked.principal
  const principal = withAccount(entry.principal, entry.own, indexes)
  entry.checked = { indexes, principal }
  return principal
}

/**
 * The principal with the request snapshot's service account applied (a revoked or deleted account fails). Only the
 * gateway's own service tokens have an account: an outside issuer's service tokens are its clients, not ours.
 */
function withAccount (principal: Principal, own: boolean, indexes: ConfigIndexes): Principal {
  return own && principal.tokenType === 'service' ? applyServiceAccount(principal, indexes) : principal
}

/** The cache entry of a fresh verification, or undefined when the token expires too soon to be worth keeping. */
function cacheEntryOf (verified: Verification, toleranceSeconds: number): CacheEntry | undefined {
  const now = Date.now()
  const ttl = Math.min(cacheLifetimeMs((verified.principal.expiresAt + toleranceSeconds) * 1000 - now), verified.maxCacheMs ?? Infinity)
  if (ttl < 1) return undefined
  // Every field named, never `{ ...verified, cachedUntilMs }`: V8 gave each spread copy a hidden class of its
  // own (a map, descriptor array and property array per entry, ~24 MB over 100k cached tokens in a heap
  // snapshot); a literal shares one.
  return {
    principal: verified.principal,
    fingerprint: verified.fingerprint,
    signedBy: verified.signedBy,
    own: verified.own,
    cachedUntilMs: now + ttl,
    checked: undefined,
  }
}

/**
 * Whether a cached verification whose cache time ran out can be renewed without checking its signature again:
 * only the gateway's own tokens, and only while the key that verified the signature is still published with the
 * same public key. Checking again would then give the same answer (same token bytes, same key; the issuer's rules
 * are the same, or the fingerprint would differ; expiry is checked on every use), so the renewal is that check
 * without the signature arithmetic and its promise. A key retired by a key-directory rescan is no longer
 * published: its tokens are verified in full, and fail.
 */
function renewable (entry: CacheEntry, signers: OwnSigners): boolean {
  return entry.signedBy !== undefined && signers.stillPublished(entry.signedBy)
}
