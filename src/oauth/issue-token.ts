import { signFromTemplate, tokenTemplate, type FixedClaims, type SignedAccessToken, type SigningKey } from './token-template.js'

export type { SignedAccessToken, SigningKey }

export interface AccessTokenClaims extends FixedClaims {
  lifetimeSeconds: number
  /** Seconds since epoch; defaults to now. */
  issuedAt?: number
}

/**
 * Signs an RFC 9068 access token: header `{alg, kid, typ:'at+jwt'}`, claims `iss`, `sub`, `client_id`, `aud`,
 * `iat`, `exp`, `jti` (128 random bits), `scope` (space-separated), `scopes` (array), `organization_id` and
 * `token_type`. The verifier of either profile requires all of them.
 *
 * Signed synchronously with node:crypto (token-template.ts, compact-jws.ts); the header and claims are serialised exactly as
 * jose's `SignJWT` did before (same members, same order), so tokens are byte-for-byte the same up to the
 * signature (test/unit/oauth-compact-jws.test.ts). The token endpoint keeps the template of each client instead
 * of building one per token (token-templates.ts).
 */
export async function signAccessToken (key: SigningKey, claims: AccessTokenClaims): Promise<SignedAccessToken> {
  const issuedAt = claims.issuedAt ?? Math.floor(Date.now() / 1000)
  return signFromTemplate(tokenTemplate(key, claims), issuedAt, claims.lifetimeSeconds)
}
