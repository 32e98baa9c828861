import { createLocalJWKSet, exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload, type JWTHeaderParameters } from 'jose'
import { randomUUID } from 'node:crypto'
import type { KeyStore } from '../../src/runtime/shared-resources.js'

/** A signing key with its public JWK (`kid`, `alg`, `use` set). */
export interface TestKey {
  readonly kid: string
  readonly alg: string
  readonly privateKey: CryptoKey
  readonly publicKey: CryptoKey
  readonly publicJwk: JWK
}

export async function generateTestKey (kid: string, alg = 'EdDSA'): Promise<TestKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true })
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' }
  return { kid, alg, privateKey, publicKey, publicJwk }
}

/** A KeyStore over one generated key, as the oauth helper's key store would present it. */
export function keyStoreOf (key: TestKey): KeyStore {
  const jwks = { keys: [key.publicJwk] }
  return {
    signing: { kid: key.kid, alg: key.alg, privateKey: key.privateKey },
    jwks: () => jwks,
    resolve: createLocalJWKSet(jwks),
  }
}

export const serviceIssuer = 'https://gateway.test'
export const serviceAudience = 'https://api.gateway.test'
export const userIssuer = 'https://users.test'
export const userAudience = 'lanegate-users'

/** Options of {@link mint}: claims to add or override (`undefined` removes a claim) and header overrides. */
export interface MintOptions {
  claims?: Record<string, unknown>
  header?: Partial<JWTHeaderParameters> & Record<string, unknown>
  /** Extension parameters marked understood when signing (for `crit` tests). */
  crit?: Record<string, boolean>
}

/** Claims of a valid service token for `clientId` in `organization`. */
export function serviceClaims (clientId = 'svc_pay', organization = 'org_parent', scope = 'commerce:payment-intents.read commerce:payment-intents.create'): Record<string, unknown> {
  const now = Math.floor(Date.now() / 1000)
  return {
    iss: serviceIssuer,
    sub: clientId,
    client_id: clientId,
    aud: serviceAudience,
    iat: now,
    exp: now + 3600,
    jti: randomUUID(),
    scope,
    scopes: scope.split(' '),
    organization_id: organization,
    token_type: 'service',
  }
}

/** Claims of a valid user token from the test user issuer. */
export function userClaims (organization = 'org_parent', scope = 'engage:content.view'): Record<string, unknown> {
  return { ...serviceClaims('user-app', organization, scope), iss: userIssuer, aud: userAudience, sub: 'user_42', token_type: 'user' }
}

/** Signs a JWT with `key`; header defaults `{alg, kid, typ:'at+jwt'}`. */
export async function mint (key: TestKey, base: Record<string, unknown>, options: MintOptions = {}): Promise<string> {
  const payload: Record<string, unknown> = { ...base }
  for (const [name, value] of Object.entries(options.claims ?? {})) {
    if (value === undefined) delete payload[name]
    else payload[name] = value
  }
  const header = { alg: key.alg, kid: key.kid, typ: 'at+jwt', ...options.header } as JWTHeaderParameters
  for (const [name, value] of Object.entries(header)) if (value === undefined) delete (header as Record<string, unknown>)[name]
  return new SignJWT(payload as JWTPayload).setProtectedHeader(header).sign(key.privateKey, options.crit === undefined ? undefined : { crit: options.crit })
}

/** Signs a JWT with HMAC over `secret` (for the "public key as HMAC secret" attack). */
export async function mintHmac (secret: Uint8Array, base: Record<string, unknown>, kid: string): Promise<string> {
  return new SignJWT(base as JWTPayload).setProtectedHeader({ alg: 'HS256', kid, typ: 'at+jwt' }).sign(secret)
}

/** An unsigned `alg:none` token. */
export function mintNone (base: Record<string, unknown>, kid: string): string {
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
  return `${encode({ alg: 'none', kid, typ: 'at+jwt' })}.${encode(base)}.`
}
