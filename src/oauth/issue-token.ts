import type { CryptoKey } from 'jose'
import { encodedAccessTokenHeader, signCompact } from './compact-jws.js'
import { randomTokenId } from '../node-tuning/random-pool.js'

/** What a token is signed with: a KeyStore's `signing` or the development user issuer's key. */
export interface SigningKey {
  readonly kid: string
  readonly alg: string
  readonly privateKey: CryptoKey
}

export interface AccessTokenClaims {
  issuer: string
  audience: string
  subject: string
  clientId: string
  organizationId: string
  /** Granted scope names, in the order they are reported. */
  scopes: readonly string[]
  tokenType: 'service' | 'user'
  lifetimeSeconds: number
  /** Seconds since epoch; defaults to now. */
  issuedAt?: number
}

export interface SignedAccessToken {
  token: string
  jti: string
  issuedAt: number
  expiresAt: number
}

/**
 * Signs an RFC 9068 access token: header `{alg, kid, typ:'at+jwt'}`, claims `iss`, `sub`, `client_id`, `aud`,
 * `iat`, `exp`, `jti` (128 random bits), `scope` (space-separated), `scopes` (array), `organization_id` and
 * `token_type`. The verifier of either profile requires all of them.
 *
 * Signed synchronously with node:crypto (compact-jws.ts); the header and claims are serialised exactly as
 * jose's `SignJWT` did before (same members, same order), so tokens are byte-for-byte the same up to the
 * signature (test/unit/oauth-compact-jws.test.ts).
 */
export async function signAccessToken (key: SigningKey, claims: AccessTokenClaims): Promise<SignedAccessToken> {
  const issuedAt = claims.issuedAt ?? Math.floor(Date.now() / 1000)
  const expiresAt = issuedAt + claims.lifetimeSeconds
  if (!Number.isFinite(issuedAt) || !Number.isFinite(expiresAt)) throw new TypeError('iat and exp must be finite numbers')
  const jti = randomTokenId()
  // Member order is the old SignJWT order: constructor payload, then iss, sub, aud, iat, exp, jti.
  const payload = JSON.stringify({
    client_id: claims.clientId,
    scope: claims.scopes.join(' '),
    scopes: claims.scopes,
    organization_id: claims.organizationId,
    token_type: claims.tokenType,
    iss: claims.issuer,
    sub: claims.subject,
    aud: claims.audience,
    iat: issuedAt,
    exp: expiresAt,
    jti,
  })
  const token = signCompact(key.alg, key.privateKey, encodedAccessTokenHeader(key.alg, key.kid), payload)
  return { token, jti, issuedAt, expiresAt }
}
