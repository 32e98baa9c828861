import { hash } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import { decodeJwt, decodeProtectedHeader, errors as joseErrors, jwtVerify } from 'jose'
import { LRUCache } from 'lru-cache'
import type { ConfigIndexes } from '../config/indexes.js'
import type { GatewayConfig } from '../config/types.js'
import type { KeyStore, TokenVerifier } from '../pipeline/shared-resources.js'
import type { Principal } from '../pipeline/request-context.js'
import { invalidToken } from './bearer-challenge.js'
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
/** A cached verification is dropped after this long even if the token lives longer. */
const maxCacheTtlMs = 10 * 60_000
/** The claims every bearer token must carry (RFC 9068 §2.2). */
const requiredClaims = ['exp', 'iat', 'jti', 'sub', 'client_id', 'aud', 'iss']

interface CachedVerification {
  readonly principal: Principal
  /** The profile fingerprint the token was verified under. */
  readonly fingerprint: string
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
  const cache = new LRUCache<string, CachedVerification>({ max: deps.cacheSize ?? 100_000 })
  const lastKeyWarning = new Map<string, number>()

  async function verifyUncached (token: string, config: GatewayConfig, profiles: ReadonlyMap<string, TokenProfile>): Promise<CachedVerification> {
    if (!b64token.test(token)) throw invalidToken('The access token is malformed')
    let issuer: unknown
    try {
      decodeProtectedHeader(token)
      issuer = decodeJwt(token).iss
    } catch (error) {
      throw invalidToken('The access token is malformed', error)
    }
    const profile = typeof issuer === 'string' ? profiles.get(issuer) : undefined
    if (profile === undefined) throw invalidToken('The access token is invalid', new Error('untrusted issuer'))

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
      // Anything else, including a key set that cannot be fetched, is the caller's 401 and not a 500 (C2).
      throw invalidToken('The access token is invalid', error)
    }
    return { principal: principalFromClaims(payload, profile), fingerprint: profile.fingerprint }
  }

  /** Key-source failures are the operator's problem: warn, at most once a minute per issuer. */
  function warnKeyFailure (issuer: string, error: unknown): void {
    const now = Date.now()
    if ((lastKeyWarning.get(issuer) ?? 0) + 60_000 > now) return
    lastKeyWarning.set(issuer, now)
    deps.logger.warn({ err: error, issuer }, 'could not load the keys of a token issuer')
  }

  return {
    async verify (token: string, config: GatewayConfig, indexes: ConfigIndexes): Promise<Principal> {
      if (token.length > maxTokenLength) throw invalidToken('The access token is malformed')
      const profiles = profilesFor(config)
      const nowSeconds = Date.now() / 1000
      const key = cacheKey(token)
      let entry = cache.get(key)
      if (entry !== undefined && profiles.get(entry.principal.issuer)?.fingerprint !== entry.fingerprint) {
        // The issuer's rules changed with a reload: verify again under the new ones.
        cache.delete(key)
        entry = undefined
      }
      if (entry === undefined) {
        entry = await verifyUncached(token, config, profiles)
        const ttl = Math.min((entry.principal.expiresAt + config.issuer.clock_tolerance_seconds - nowSeconds) * 1000, maxCacheTtlMs)
        if (ttl >= 1) cache.set(key, entry, { ttl: Math.floor(ttl) })
      } else if (entry.principal.expiresAt <= nowSeconds - config.issuer.clock_tolerance_seconds) {
        cache.delete(key)
        throw invalidToken('The access token expired')
      }
      return entry.principal.tokenType === 'service' ? applyServiceAccount(entry.principal, indexes) : entry.principal
    },
  }
}
