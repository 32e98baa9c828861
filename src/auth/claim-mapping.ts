import type { UserTokenIssuerConfig } from '../config/types.js'
import type { Principal } from '../runtime/request-context.js'
import { invalidToken } from './bearer-challenge.js'
import { internScopes, internString } from '../node-tuning/claim-interning.js'

/** `user_token_issuers[].claims` as loaded. */
export type IssuerClaimsConfig = NonNullable<UserTokenIssuerConfig['claims']>

/**
 * How one outside issuer's claims become a Principal, compiled once per config snapshot from its `claims:` block:
 * the claims of Keycloak, Entra ID, Okta or node-oidc-provider tokens (and of introspection answers) name the
 * subject, client, scopes, tenant and kind of caller each in their own way.
 */
export interface ClaimMapping {
  readonly subject: readonly string[]
  readonly clientId: readonly string[]
  readonly tokenId: readonly string[]
  readonly scopes: ReadonlyArray<{ readonly path: readonly string[], readonly separator: string }>
  readonly organization: { readonly path: readonly string[], readonly map: Readonly<Record<string, string>> | undefined } | { readonly value: string }
  readonly tokenType: 'user' | 'service' | { readonly path: readonly string[], readonly map: Readonly<Record<string, 'user' | 'service'>> }
}

export function compileClaimMapping (config: IssuerClaimsConfig): ClaimMapping {
  const sources = Array.isArray(config.scopes) ? config.scopes : [config.scopes]
  const tokenType = config.token_type
  return {
    subject: (config.subject ?? 'sub').split('.'),
    clientId: (config.client_id ?? 'client_id').split('.'),
    tokenId: (config.token_id ?? 'jti').split('.'),
    scopes: sources.map((source) => ({ path: source.claim.split('.'), separator: source.separator ?? ' ' })),
    organization: 'const' in config.organization ? { value: config.organization.const } : { path: config.organization.claim.split('.'), map: config.organization.map },
    tokenType: typeof tokenType === 'string' ? tokenType : { path: tokenType.claim.split('.'), map: tokenType.map },
  }
}

/**
 * The Principal of an outside issuer's verified claims (a JWT payload or an introspection answer). Every claim the
 * mapping names must be there with the right type: a token the mapping cannot read is refused, never let through
 * with a guessed organization or type. A token without a subject (client credentials) takes its client id, as RFC
 * 9068 §2.2 has such tokens do.
 */
export function principalFromMappedClaims (claims: Readonly<Record<string, unknown>>, mapping: ClaimMapping, issuer: string): Principal {
  const clientId = claimAt(claims, mapping.clientId)
  if (typeof clientId !== 'string' || clientId === '') return reject(`${mapping.clientId.join('.')} is not a non-empty string`)
  const subject = claimAt(claims, mapping.subject) ?? clientId
  if (typeof subject !== 'string' || subject === '') return reject(`${mapping.subject.join('.')} is not a non-empty string`)
  const tokenId = claimAt(claims, mapping.tokenId) ?? ''
  if (typeof tokenId !== 'string') return reject(`${mapping.tokenId.join('.')} is not a string`)
  if (typeof claims.exp !== 'number') return reject('exp is not a number')
  return {
    tokenType: tokenTypeOf(claims, mapping),
    subject: internString(subject),
    clientId: internString(clientId),
    organizationId: internString(organizationOf(claims, mapping)),
    scopes: internScopes(scopesOf(claims, mapping)),
    tokenId,
    expiresAt: claims.exp,
    issuer,
  }
}

/** The value at a claim path (`realm_access.roles`), or undefined when any step is missing or not an object. */
export function claimAt (claims: Readonly<Record<string, unknown>>, path: readonly string[]): unknown {
  let value: unknown = claims
  for (const name of path) {
    if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.hasOwn(value, name)) return undefined
    value = (value as Record<string, unknown>)[name]
  }
  return value
}

/** Every source's scopes, as the one space-separated string internScopes shares sets by. */
function scopesOf (claims: Readonly<Record<string, unknown>>, mapping: ClaimMapping): string {
  const scopes: string[] = []
  for (const source of mapping.scopes) {
    const value = claimAt(claims, source.path)
    // An absent source gives no scopes (a token may carry roles but no scope string); a mistyped one is refused.
    if (value === undefined) continue
    if (typeof value === 'string') scopes.push(...value.split(source.separator))
    else if (Array.isArray(value) && value.every((v) => typeof v === 'string')) scopes.push(...value as string[])
    else return reject(`${source.path.join('.')} is neither a string nor an array of strings`)
  }
  // A scope with a space in it could not be told apart from two once joined: such a value is not a scope.
  return scopes.filter((scope) => scope !== '' && !/\s/.test(scope)).join(' ')
}

function organizationOf (claims: Readonly<Record<string, unknown>>, mapping: ClaimMapping): string {
  if ('value' in mapping.organization) return mapping.organization.value
  const { path, map } = mapping.organization
  const value = claimAt(claims, path)
  if (typeof value !== 'string' || value === '') return reject(`${path.join('.')} is not a non-empty string`)
  if (map === undefined) return value
  const organization = Object.hasOwn(map, value) ? map[value] : undefined
  if (organization === undefined) return reject(`${path.join('.')} names no organization in the issuer's map`)
  return organization
}

function tokenTypeOf (claims: Readonly<Record<string, unknown>>, mapping: ClaimMapping): 'user' | 'service' {
  const rule = mapping.tokenType
  if (typeof rule === 'string') return rule
  const value = claimAt(claims, rule.path)
  const type = typeof value === 'string' && Object.hasOwn(rule.map, value) ? rule.map[value] : undefined
  if (type === undefined) return reject(`${rule.path.join('.')} has no token type in the issuer's map`)
  return type
}

function reject (reason: string): never {
  throw invalidToken('The access token is invalid', new Error(reason))
}
