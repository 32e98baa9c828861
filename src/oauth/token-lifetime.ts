import type { IssuerConfig } from '../config/types.js'

/**
 * A token's lifetime in seconds: the shortest `issuer.scope_lifetimes` entry among the granted scopes (the
 * most sensitive scope decides), or `default_lifetime_seconds` when no granted scope has an entry. Scopes
 * without an entry do not take part.
 */
export function tokenLifetime (scopes: readonly string[], issuer: IssuerConfig): number {
  let shortest: number | undefined
  for (const scope of scopes) {
    const lifetime = Object.hasOwn(issuer.scope_lifetimes, scope) ? issuer.scope_lifetimes[scope] : undefined
    if (lifetime !== undefined && (shortest === undefined || lifetime < shortest)) shortest = lifetime
  }
  return shortest ?? issuer.default_lifetime_seconds
}
