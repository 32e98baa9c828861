import type { GatewayConfig, ServiceAccountConfig } from '../config/types.js'
import { GatewayError } from '../plugin/gateway-error.js'

/**
 * Decides the granted scopes (the spec's scope rules):
 * 1. `scope` omitted or empty → every scope the account is allowed;
 * 2. a subset of the allowed scopes → exactly that subset (duplicates dropped, request order kept);
 * 3. any scope not allowed to the account, or not defined in gateway.yaml → 400 `invalid_scope`.
 * Scope tokens are separated by spaces (RFC 6749 §3.3); runs of spaces are tolerated.
 */
export function grantScopes (requested: string | undefined, account: ServiceAccountConfig, config: GatewayConfig): string[] {
  const allowed = new Set(account.scopes.filter((scope) => Object.hasOwn(config.scopes, scope)))
  const names = [...new Set((requested ?? '').split(' ').filter((name) => name !== ''))]
  if (names.length === 0) {
    if (allowed.size === 0) throw new GatewayError('invalid_scope', { message: 'No scope is allowed to this client.' })
    return [...allowed]
  }
  if (!names.every((name) => allowed.has(name))) throw new GatewayError('invalid_scope')
  return names
}

/**
 * `grantScopes` that remembers, per account object, the answer to the request naming no scope (every scope the
 * account is allowed): most clients never name one, and the answer changes only with the account or the scope
 * definitions, which a reload replaces. A refusal is not remembered. The arrays it answers are shared: read only.
 */
export function createScopeGrants (): (requested: string | undefined, account: ServiceAccountConfig, config: GatewayConfig) => readonly string[] {
  const allAllowed = new WeakMap<ServiceAccountConfig, { definitions: GatewayConfig['scopes'], scopes: readonly string[] }>()
  return function grant (requested, account, config) {
    if (requested !== undefined) return grantScopes(requested, account, config)
    const known = allAllowed.get(account)
    if (known !== undefined && known.definitions === config.scopes) return known.scopes
    const scopes = grantScopes(undefined, account, config)
    allAllowed.set(account, { definitions: config.scopes, scopes })
    return scopes
  }
}
