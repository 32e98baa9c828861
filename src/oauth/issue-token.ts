import { randomBytes } from 'node:crypto'
import { SignJWT, type CryptoKey } from 'jose'

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
 */
export async function signAccessToken (key: SigningKey, claims: AccessTokenClaims): Promise<SignedAccessToken> {
  const issuedAt = claims.issuedAt ?? Math.floor(Date.now() / 1000)
  const expiresAt = issuedAt + claims.lifetimeSeconds
  const jti = randomBytes(16).toString('base64url')
  const token = await new SignJWT({
    client_id: claims.clientId,
    scope: claims.scopes.join(' '),
    scopes: [...claims.scopes],
    organization_id: claims.organizationId,
    token_type: claims.tokenType,
  })
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'at+jwt' })
    .setIssuer(claims.issuer)
    .setSubject(claims.subject)
    .setAudience(claims.audience)
    .setIssuedAt(issuedAt)
    .setExpirationTime(expiresAt)
    .setJti(jti)
    .sign(key.privateKey)
  return { token, jti, issuedAt, expiresAt }
}
