import { SignJWT, type CryptoKey } from 'jose'
import type { AccessTokenClaims } from '../../src/oauth/issue-token.js'
import type { FixedClaims } from '../../src/oauth/token-template.js'

/** One client's fixed claims, as the token tests sign them. */
export const TOKEN_CLAIMS: FixedClaims = {
  issuer: 'https://gateway.example',
  audience: 'lanegate',
  subject: 'content-reader',
  clientId: 'content-reader',
  organizationId: 'org_001',
  scopes: ['content:read', 'content:write'],
  tokenType: 'service',
}

/**
 * The token exactly as the gateway signed it with jose's SignJWT before its node:crypto signer: the reference the
 * gateway's tokens are held to (byte for byte with EdDSA, whose signatures are deterministic; up to the signature
 * with the others).
 */
export function joseToken (key: { kid: string, alg: string, privateKey: CryptoKey }, claims: AccessTokenClaims, jti: string): Promise<string> {
  const issuedAt = claims.issuedAt as number
  return new SignJWT({
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
    .setExpirationTime(issuedAt + claims.lifetimeSeconds)
    .setJti(jti)
    .sign(key.privateKey)
}
