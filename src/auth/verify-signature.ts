import type { FastifyBaseLogger } from 'fastify'
import { decodeJwt, decodeProtectedHeader, errors as joseErrors, jwtVerify } from 'jose'
import type { GatewayConfig } from '../config/types.js'
import type { Principal } from '../runtime/request-context.js'
import { invalidToken } from './bearer-challenge.js'
import { issuerWarning } from './issuer-warning.js'
import type { OwnSigners, Signer } from './own-signers.js'
import { principalFromMappedClaims } from './claim-mapping.js'
import { introspector } from './introspection.js'
import { principalFromClaims } from './token-claims.js'
import type { TokenProfile } from './token-profiles.js'

/** RFC 6750 §2.1 `b64token`: checked before a token is first verified (a cached token passed it already). */
const b64token = /^[A-Za-z0-9\-._~+/]+=*$/
/** The claims every bearer token in lanegate's own profile must carry (RFC 9068 §2.2). */
const requiredClaims = ['exp', 'iat', 'jti', 'sub', 'client_id', 'aud', 'iss']
/** The claims an outside issuer's token must carry whatever its mapping (which checks the claims it names). */
const mappedRequiredClaims = ['exp', 'iat', 'aud', 'iss']

/** What a full verification establishes: the caller, the issuer's rules it was checked under, and its signer. */
export interface Verification {
  readonly principal: Principal
  /** The profile fingerprint the token was verified under. */
  readonly fingerprint: string
  /**
   * The gateway's own tokens only: the `kid` and public key (publicKeyId) whose signature check passed, read from
   * the published key set before and after the check. Undefined for user tokens.
   */
  readonly signedBy: Signer | undefined
  /** Whether the gateway's own issuer signed it: only its service tokens are checked against service_accounts. */
  readonly own: boolean
  /** Longest time the result may be reused (an introspection answer's `cache_seconds`); else until exp (capped). */
  readonly maxCacheMs?: number
}

export type VerifySignature = (token: string, config: GatewayConfig, profiles: ReadonlyMap<string, TokenProfile>) => Promise<Verification>

/**
 * The full check of a token not in the cache, as named steps: its shape → its issuer's profile → the signature
 * and claims (jose) → its lifetime → the principal, and which of the gateway's own keys signed it.
 */
export function signatureVerifier (logger: FastifyBaseLogger, signers: OwnSigners): VerifySignature {
  const warnKeyFailure = issuerWarning(logger, 'could not load the keys of a token issuer')
  const introspect = introspector(logger)

  return async function verifySignature (token, config, profiles) {
    if (!b64token.test(token)) throw invalidToken('The access token is malformed')
    // An opaque token (not three dot-separated parts) names no issuer: the one issuer that introspects checks it.
    const introspecting = looksLikeJwt(token) ? undefined : introspectingProfile(profiles)
    const { kid, profile } = introspecting === undefined ? issuerProfile(token, profiles) : { kid: undefined, profile: introspecting }
    if (profile.introspection !== undefined && profile.mapping !== undefined && (introspecting !== undefined || !profile.hasKeys)) {
      const principal = await introspect(token, profile, profile.introspection, profile.mapping, config.issuer.clock_tolerance_seconds)
      return { principal, fingerprint: profile.fingerprint, signedBy: undefined, own: false, maxCacheMs: profile.introspection.cacheMs }
    }
    // Which published key the signature is checked with, read before and after the (asynchronous) check: only
    // when both agree is the key recorded, so a key-directory rescan in between never records the wrong key.
    const keyBefore = profile.tokenType === 'service' ? signers.publishedKey(kid) : undefined
    let payload
    try {
      let protectedHeader
      ({ payload, protectedHeader } = await jwtVerify(token, profile.getKey, {
        algorithms: profile.algorithms,
        issuer: profile.issuer,
        audience: profile.audience,
        requiredClaims: profile.mapping === undefined ? requiredClaims : mappedRequiredClaims,
        clockTolerance: config.issuer.clock_tolerance_seconds,
      }))
      checkTyp(protectedHeader.typ, profile)
    } catch (error) {
      if (error instanceof joseErrors.JWTExpired) throw invalidToken('The access token expired', error)
      if (!(error instanceof joseErrors.JOSEError)) warnKeyFailure(profile.issuer, { err: error })
      // A token signed by a key the issuer does not (or no longer) publish is the usual puzzle behind an
      // "unexplained 401" (another key directory, a rotated key): say so, without any of the token's text.
      else if (error instanceof joseErrors.JWKSNoMatchingKey) logger.info({ issuer: profile.issuer, kid: typeof kid === 'string' ? kid.slice(0, 64) : undefined }, 'bearer token refused: no key of its issuer matches its kid')
      // Anything else, including a key set that cannot be fetched, is the caller's 401 and not a 500 (C2).
      throw invalidToken('The access token is invalid', error)
    }
    checkLifetime(payload.iat, payload.exp, profile, config.issuer.clock_tolerance_seconds, logger)
    const principal = profile.mapping === undefined ? principalFromClaims(payload, profile) : principalFromMappedClaims(payload, profile.mapping, profile.issuer)
    const signedBy = keyBefore !== undefined && signers.publishedKey(kid) === keyBefore ? signers.signerOf(kid as string, keyBefore) : undefined
    return { principal, fingerprint: profile.fingerprint, signedBy, own: profile.tokenType === 'service' }
  }
}

/**
 * The `typ` header is one the issuer's profile accepts, compared as jose would (case-insensitive, `application/`
 * prefix allowed): a token of another kind (an ID token, `typ: JWT` where at+jwt is required) is not an access
 * token of this API (RFC 8725 §3.11). A JOSE error, so it is the caller's 401 like any other claim check.
 */
function checkTyp (typ: unknown, profile: TokenProfile): void {
  const normalized = typeof typ === 'string' ? typ.toLowerCase().replace(/^application\//, '') : undefined
  if (normalized === undefined || !profile.acceptTyp.includes(normalized)) {
    throw new joseErrors.JWTClaimValidationFailed('unexpected "typ" JWT header value', {}, 'typ', 'check_failed')
  }
}

/** The token's shape, its header's `kid` and the profile of the issuer it names (untrusted issuers: 401). */
function issuerProfile (token: string, profiles: ReadonlyMap<string, TokenProfile>): { kid: unknown, profile: TokenProfile } {
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
  return { kid, profile }
}

/** A JWS compact serialization has three parts; anything else is an opaque token (only on a cache miss). */
function looksLikeJwt (token: string): boolean {
  return token.split('.').length === 3
}

/** The issuer whose opaque tokens are introspected (config validation allows at most one). */
function introspectingProfile (profiles: ReadonlyMap<string, TokenProfile>): TokenProfile | undefined {
  for (const profile of profiles.values()) if (profile.introspection !== undefined) return profile
  return undefined
}

/**
 * `exp - iat` within the issuer's longest lifetime (plus the clock tolerance), and `iat` not in the future
 * (else a far-future `iat` would carry a far-future `exp` past the first check).
 */
function checkLifetime (iat: unknown, exp: unknown, profile: TokenProfile, toleranceSeconds: number, logger: FastifyBaseLogger): void {
  const now = Date.now() / 1000
  if (typeof iat !== 'number' || typeof exp !== 'number' || !Number.isFinite(iat) || !Number.isFinite(exp) ||
    iat > now + toleranceSeconds || exp - iat > profile.maxLifetimeSeconds + toleranceSeconds) {
    logger.info({ issuer: profile.issuer, max_lifetime_seconds: profile.maxLifetimeSeconds }, 'bearer token refused: iat in the future or lifetime longer than its issuer allows')
    throw invalidToken('The access token is invalid', new Error('token lifetime out of bounds'))
  }
}
