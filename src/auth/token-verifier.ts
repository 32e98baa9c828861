import { hash } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import { decodeJwt, decodeProtectedHeader, errors as joseErrors, jwtVerify, type JWK } from 'jose'
import { LRUCache } from 'lru-cache'
import type { ConfigIndexes } from '../config/indexes.js'
import type { GatewayConfig } from '../config/types.js'
import type { KeyStore, TokenSlot, TokenVerifier } from '../runtime/shared-resources.js'
import type { Principal } from '../runtime/request-context.js'
import { invalidToken } from './bearer-challenge.js'
import { internString } from './claim-interning.js'
import { applyServiceAccount, principalFromClaims } from './token-claims.js'
import { createProfileSource, type DevUserIssuerLoader, type TokenProfile } from './token-profiles.js'

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
/** RFC 6750 §2.1 `b64token`: checked before a token is first verified (a cached token passed it already). */
const b64token = /^[A-Za-z0-9\-._~+/]+=*$/
/** A cached verification is dropped after at most this long even if the token lives longer. */
const maxCacheTtlMs = 10 * 60_000
/** How much earlier than maxCacheTtlMs a long-lived token's cache time may run out (a random share of it). */
const cacheTtlSpread = 0.2

/**
 * How long a verification stays cached: until the token expires (plus the clock tolerance), but at most
 * maxCacheTtlMs less a random part of up to 20 %. The spread matters after a restart or a deploy: every client's
 * token is first seen within a few seconds, and with one fixed cap all of them would be verified again in the
 * same few seconds ten minutes later (measured: 100k cached tokens expiring together cut throughput from ~10k to
 * ~2.6k req/s for half a minute). `random` is in [0, 1).
 */
export function cacheLifetimeMs (untilExpiryMs: number, random: number = Math.random()): number {
  return Math.floor(Math.min(untilExpiryMs, maxCacheTtlMs * (1 - cacheTtlSpread * random)))
}
/** The claims every bearer token must carry (RFC 9068 §2.2). */
const requiredClaims = ['exp', 'iat', 'jti', 'sub', 'client_id', 'aud', 'iss']

interface CachedVerification {
  readonly principal: Principal
  /** The profile fingerprint the token was verified under. */
  readonly fingerprint: string
  /**
   * The gateway's own tokens only: the `kid` and public key (publicKeyId) whose signature check passed, read from
   * the published key set before and after the check. Undefined for user tokens.
   */
  readonly signedBy: { readonly kid: string, readonly key: string } | undefined
}

interface CacheEntry extends CachedVerification {
  /**
   * Epoch ms after which the token is checked again (its expiry, at most maxCacheTtlMs after it was cached).
   * Mutable: a renewal (see verifyFast) moves it on.
   */
  cachedUntilMs: number
}

/** A published public key as one comparable string (its kid, type, curve and public parameters). */
function publicKeyId (jwk: JWK): string {
  return JSON.stringify([jwk.kid, jwk.kty, jwk.crv, jwk.alg, jwk.x, jwk.y, jwk.n, jwk.e])
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
  const lastKeyWarning = new Map<string, number>()

  /**
   * One `signedBy` object per published key, shared by every token it verified (the cache holds up to 100k).
   * Bounded by the keys the gateway has published since it started: `key` is always a published key's id.
   */
  const signers = new Map<string, { readonly kid: string, readonly key: string }>()
  function signerOf (kid: string, key: string): { readonly kid: string, readonly key: string } {
    let signer = signers.get(key)
    if (signer === undefined) {
      signer = { kid: internString(kid), key }
      signers.set(key, signer)
    }
    return signer
  }

  /** The published public key of the gateway's own key set under `kid`, as publicKeyId, or undefined. */
  function ownPublishedKey (kid: unknown): string | undefined {
    if (typeof kid !== 'string') return undefined
    const jwk = deps.keys.jwks().keys.find((candidate) => candidate.kid === kid)
    return jwk === undefined ? undefined : internString(publicKeyId(jwk))
  }

  async function verifyUncached (token: string, config: GatewayConfig, profiles: ReadonlyMap<string, TokenProfile>): Promise<CachedVerification> {
    if (!b64token.test(token)) throw invalidToken('The access token is malformed')
    let issuer: unknown
    let kid: unknown
    try {
      kid = decodeProtectedHeader(token).kid
      issuer = decodeJwt(token).iss
    } catch (error) {
      throw invalidToken('The access token is malformed', error)
    }
    const profile = typeof issuer === 'string' ? profiles.get(issuer) : undefined
    if (profile === undefined) throw invalidToken('The access token is invalid', new Error('untrusted issuer'))

    // Which published key the signature is checked with, read before and after the (asynchronous) check: only
    // when both agree is the key recorded, so a key-directory rescan in between never records the wrong key.
    const keyBefore = profile.tokenType === 'service' ? ownPublishedKey(kid) : undefined
    let payload
    try {
      ({ payload } = await jwtVerify(token, profile.getKey, {
        algorithms: profile.algorithms,
        typ: 'at+jwt',
        issuer: profile.issuer,
        audience: profile.audience,
        requiredClaims,
        clockTolerance: config.issuer.clock_tolerance_seconds,
      }))
    } catch (error) {
      if (error instanceof joseErrors.JWTExpired) throw invalidToken('The access token expired', error)
      if (!(error instanceof joseErrors.JOSEError)) warnKeyFailure(profile.issuer, error)
      // A token signed by a key the issuer does not (or no longer) publish is the usual puzzle behind an
      // "unexplained 401" (another key directory, a rotated key): say so, without any of the token's text.
      else if (error instanceof joseErrors.JWKSNoMatchingKey) deps.logger.info({ issuer: profile.issuer, kid: typeof kid === 'string' ? kid.slice(0, 64) : undefined }, 'bearer token refused: no key of its issuer matches its kid')
      // Anything else, including a key set that cannot be fetched, is the caller's 401 and not a 500 (C2).
      throw invalidToken('The access token is invalid', error)
    }
    checkLifetime(payload.iat, payload.exp, profile, config.issuer.clock_tolerance_seconds)
    const principal = principalFromClaims(payload, profile)
    const signedBy = keyBefore !== undefined && ownPublishedKey(kid) === keyBefore ? signerOf(kid as string, keyBefore) : undefined
    return { principal, fingerprint: profile.fingerprint, signedBy }
  }

  /**
   * `exp - iat` within the issuer's longest lifetime (plus the clock tolerance), and `iat` not in the future
   * (else a far-future `iat` would carry a far-future `exp` past the first check).
   */
  function checkLifetime (iat: unknown, exp: unknown, profile: TokenProfile, toleranceSeconds: number): void {
    const now = Date.now() / 1000
    if (typeof iat !== 'number' || typeof exp !== 'number' || !Number.isFinite(iat) || !Number.isFinite(exp) ||
      iat > now + toleranceSeconds || exp - iat > profile.maxLifetimeSeconds + toleranceSeconds) {
      deps.logger.info({ issuer: profile.issuer, max_lifetime_seconds: profile.maxLifetimeSeconds }, 'bearer token refused: iat in the future or lifetime longer than its issuer allows')
      throw invalidToken('The access token is invalid', new Error('token lifetime out of bounds'))
    }
  }

  /** Key-source failures are the operator's problem: warn, at most once a minute per issuer. */
  function warnKeyFailure (issuer: string, error: unknown): void {
    const now = Date.now()
    if ((lastKeyWarning.get(issuer) ?? 0) + 60_000 > now) return
    lastKeyWarning.set(issuer, now)
    deps.logger.warn({ err: error, issuer }, 'could not load the keys of a token issuer')
  }

  function remember (slot: TokenSlot | undefined, token: string, entry: CacheEntry): void {
    if (slot === undefined) return
    slot.token = token
    slot.entry = entry
  }

  function forget (slot: TokenSlot | undefined, key: string): void {
    if (slot !== undefined) slot.token = slot.entry = undefined
    cache.delete(key)
  }

  function withAccount (principal: Principal, indexes: ConfigIndexes): Principal {
    return principal.tokenType === 'service' ? applyServiceAccount(principal, indexes) : principal
  }

  async function verifyAndCache (token: string, key: string, config: GatewayConfig, indexes: ConfigIndexes, profiles: ReadonlyMap<string, TokenProfile>, slot: TokenSlot | undefined): Promise<Principal> {
    const verified = await verifyUncached(token, config, profiles)
    const now = Date.now()
    const ttl = cacheLifetimeMs((verified.principal.expiresAt + config.issuer.clock_tolerance_seconds) * 1000 - now)
    if (ttl >= 1) {
      // Every field named, never `{ ...verified, cachedUntilMs }`: V8 gave each spread copy a hidden class of its
      // own (a map, descriptor array and property array per entry, ~24 MB over 100k cached tokens in a heap
      // snapshot); a literal shares one.
      const entry: CacheEntry = {
        principal: verified.principal,
        fingerprint: verified.fingerprint,
        signedBy: verified.signedBy,
        cachedUntilMs: now + ttl,
      }
      cache.set(key, entry)
      remember(slot, token, entry)
    }
    return withAccount(verified.principal, indexes)
  }

  /**
   * Whether a cached verification whose cache time ran out can be renewed without checking its signature again:
   * only the gateway's own tokens, and only while the key that verified the signature is still published with the
   * same public key. Checking again would then give the same answer (same token bytes, same key; the issuer's rules
   * are the same, or the fingerprint would differ; expiry is checked on every use), so the renewal is that check
   * without the signature arithmetic and its promise. A key retired by a key-directory rescan is no longer
   * published: its tokens are verified in full, and fail.
   */
  function renewable (entry: CacheEntry): boolean {
    return entry.signedBy !== undefined && ownPublishedKey(entry.signedBy.kid) === entry.signedBy.key
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
    let entry = slot !== undefined && slot.token === token ? slot.entry as CacheEntry : undefined
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
    if (sameRules && now >= entry.cachedUntilMs && renewable(entry)) {
      entry.cachedUntilMs = now + cacheLifetimeMs(untilExpiryMs)
    } else if (!sameRules || now >= entry.cachedUntilMs) {
      // The issuer's rules changed with a reload, or the cache time ran out and the token cannot be renewed: verify
      // again.
      key ??= cacheKey(token)
      forget(slot, key)
      return verifyAndCache(token, key, config, indexes, profiles, slot)
    }
    return withAccount(entry.principal, indexes)
  }

  return {
    verifyFast,
    async verify (token, config, indexes) {
      return await verifyFast(token, config, indexes)
    },
  }
}
