import type { JWTPayload } from 'jose'
import type { ConfigIndexes } from '../config/indexes.js'
import type { ServiceAccountConfig } from '../config/types.js'
import type { Principal } from '../runtime/request-context.js'
import type { TokenProfile } from './token-profiles.js'
import { invalidToken } from './bearer-challenge.js'
import { internScopes, internString } from '../node-tuning/claim-interning.js'

/**
 * Turns a signature-verified payload into a Principal, checking what jose does not: the claim types the gateway
 * relies on and that `token_type` matches the profile (a user token never passes as a service token, B12).
 */
export function principalFromClaims (payload: JWTPayload, profile: TokenProfile): Principal {
  const claims = payload as Record<string, unknown>
  if (claims.token_type !== profile.tokenType) return reject('token_type does not match the issuer')
  for (const name of ['sub', 'client_id', 'jti', 'scope', 'organization_id'] as const) {
    if (typeof claims[name] !== 'string') return reject(`${name} is not a string`)
  }
  if (typeof claims.exp !== 'number') return reject('exp is not a number')
  if (claims.organization_id === '') return reject('organization_id is empty')
  if (profile.tokenType === 'service' && claims.sub !== claims.client_id) return reject('sub differs from client_id')
  // Only what Principal needs, with repeated values shared: the verifier caches this object for the token's life.
  return {
    tokenType: profile.tokenType,
    subject: internString(claims.sub as string),
    clientId: internString(claims.client_id as string),
    organizationId: internString(claims.organization_id as string),
    scopes: internScopes(claims.scope as string),
    tokenId: claims.jti as string,
    expiresAt: claims.exp,
    issuer: profile.issuer,
  }
}

function reject (reason: string): never {
  throw invalidToken('The access token is invalid', new Error(reason))
}

/**
 * Applies the current config to a service token's principal: the account must still exist, be active and belong
 * to the same organization (B14), and the token keeps only the scopes the account still has. Runs on every
 * request, cached token or not, so a reload that revokes an account takes effect on its next request.
 */
export function applyServiceAccount (principal: Principal, indexes: ConfigIndexes): Principal {
  const account = indexes.accounts.get(principal.clientId)
  if (account === undefined || account.status !== 'active') {
    throw invalidToken('The client has been revoked', new Error(`service account ${principal.clientId} is not active`))
  }
  if (account.organization !== principal.organizationId) {
    throw invalidToken('The access token is invalid', new Error(`service account ${principal.clientId} changed organization`))
  }
  const allowed = allowedScopes(account)
  for (const scope of principal.scopes) {
    if (!allowed.has(scope)) return narrowed(principal, account, allowed)
  }
  return principal
}

/**
 * The principal with only the scopes the account still has, built once per (cached principal, account version)
 * rather than on every request: accounts are immutable within a snapshot, and a reload brings new objects.
 */
const narrowedPrincipals = new WeakMap<Principal, { account: ServiceAccountConfig, principal: Principal }>()

function narrowed (principal: Principal, account: ServiceAccountConfig, allowed: ReadonlySet<string>): Principal {
  const known = narrowedPrincipals.get(principal)
  if (known !== undefined && known.account === account) return known.principal
  const result: Principal = { ...principal, scopes: new Set([...principal.scopes].filter((s) => allowed.has(s))) }
  narrowedPrincipals.set(principal, { account, principal: result })
  return result
}

/** Each account's scopes as a set, built once per config snapshot (accounts are immutable within one). */
const scopeSets = new WeakMap<ServiceAccountConfig, ReadonlySet<string>>()

function allowedScopes (account: ServiceAccountConfig): ReadonlySet<string> {
  let set = scopeSets.get(account)
  if (set === undefined) {
    set = new Set(account.scopes)
    scopeSets.set(account, set)
  }
  return set
}
