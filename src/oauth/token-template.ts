import { sign, type KeyLike, type SignKeyObjectInput } from 'node:crypto'
import type { CryptoKey } from 'jose'
import { encodedAccessTokenHeader, keyObjectOf, signingAlgorithm } from './compact-jws.js'
import { oneByteCopy } from '../node-tuning/one-byte-copy.js'
import { randomTokenId } from '../node-tuning/random-pool.js'

/** What a token is signed with: a KeyStore's `signing` or the development user issuer's key. */
export interface SigningKey {
  readonly kid: string
  readonly alg: string
  readonly privateKey: CryptoKey
}

/** The claims every token of one client under one key shares: all but `iat`, `exp` and `jti`. */
export interface FixedClaims {
  readonly issuer: string
  readonly audience: string
  readonly subject: string
  readonly clientId: string
  readonly organizationId: string
  /** Granted scope names, in the order they are reported. */
  readonly scopes: readonly string[]
  readonly tokenType: 'service' | 'user'
}

export interface SignedAccessToken {
  token: string
  jti: string
  issuedAt: number
  expiresAt: number
}

/**
 * A token's fixed part, encoded once: the protected header, and the payload's JSON up to `"iat":` in base64url.
 * base64 turns each 3 bytes into 4 characters on its own, so the fixed JSON is encoded up to its last whole
 * 3-byte group and its 0–2 remaining bytes (`carry`) are encoded with the variable claims of each token: the
 * token is byte for byte what encoding the whole payload gives.
 */
export interface TokenTemplate {
  readonly key: SigningKey
  readonly claims: FixedClaims
  /** The `scope` claim: the granted scopes joined by spaces. */
  readonly scope: string
  /** `scope` as a JSON string, for the token response. */
  readonly scopeJson: string
  /** `<base64url header>.<base64url of the fixed JSON's whole 3-byte groups>`. */
  readonly head: string
  readonly carry: Buffer
  readonly digest: string | null
  readonly signKey: KeyLike | SignKeyObjectInput
}

/**
 * Builds the template of `claims` under `key`. The payload's members come in the order jose's `SignJWT` wrote
 * them: constructor payload (client_id, scope, scopes, organization_id, token_type), then iss, sub, aud, iat, exp,
 * jti. Throws for an algorithm the gateway does not sign with.
 */
export function tokenTemplate (key: SigningKey, claims: FixedClaims): TokenTemplate {
  const algorithm = signingAlgorithm(key.alg)
  if (algorithm === undefined) throw new TypeError(`unsupported signing algorithm ${key.alg}`)
  const scope = claims.scopes.join(' ')
  const fixed = JSON.stringify({
    client_id: claims.clientId,
    scope,
    scopes: claims.scopes,
    organization_id: claims.organizationId,
    token_type: claims.tokenType,
    iss: claims.issuer,
    sub: claims.subject,
    aud: claims.audience,
  })
  const bytes = Buffer.from(`${fixed.slice(0, -1)},"iat":`)
  const whole = bytes.length - bytes.length % 3
  const keyObject = keyObjectOf(key.privateKey)
  return {
    key,
    claims,
    scope,
    // The response body is this plus one-byte parts: kept one-byte, the whole body is (node-tuning/one-byte-copy.ts).
    scopeJson: oneByteCopy(JSON.stringify(scope)),
    head: `${encodedAccessTokenHeader(key.alg, key.kid)}.${bytes.toString('base64url', 0, whole)}`,
    carry: Buffer.from(bytes.subarray(whole)),
    digest: algorithm.digest,
    signKey: algorithm.dsaEncoding === undefined ? keyObject : { key: keyObject, dsaEncoding: algorithm.dsaEncoding },
  }
}

/** Where a token's variable claims are assembled; one call at a time, so one buffer serves all. */
let scratch = Buffer.allocUnsafe(128)

/**
 * Signs the token of `template` issued at `issuedAt` (seconds since epoch) for `lifetimeSeconds`, with a new `jti`
 * (128 random bits), synchronously with node:crypto (compact-jws.ts says why).
 */
export function signFromTemplate (template: TokenTemplate, issuedAt: number, lifetimeSeconds: number): SignedAccessToken {
  const expiresAt = issuedAt + lifetimeSeconds
  if (!Number.isFinite(issuedAt) || !Number.isFinite(expiresAt)) throw new TypeError('iat and exp must be finite numbers')
  const jti = randomTokenId()
  // Numbers print as JSON.stringify prints them; a jti is base64url, which needs no escaping.
  const variable = `${issuedAt},"exp":${expiresAt},"jti":"${jti}"}`
  const length = template.carry.length + variable.length
  if (length > scratch.length) scratch = Buffer.allocUnsafe(2 * length)
  template.carry.copy(scratch, 0)
  scratch.write(variable, template.carry.length, 'latin1')
  const signingInput = template.head + scratch.toString('base64url', 0, length)
  const signature = sign(template.digest, Buffer.from(signingInput, 'latin1'), template.signKey)
  return { token: `${signingInput}.${signature.toString('base64url')}`, jti, issuedAt, expiresAt }
}
