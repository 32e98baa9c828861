import type { Principal } from './request-state.js'

/** Why an API key was not accepted: unknown or wrong, its account revoked, or too many first-seen keys at once. */
export type ApiKeyFailure = 'invalid' | 'revoked' | 'busy'

/**
 * What the verifier remembers of one connection: the last key it accepted there, by its exact text, and what it
 * gave. A keep-alive client sends the same key on every request; then the next request costs a constant-time
 * comparison instead of the key's digest and cache lookups. Opaque to the caller, who keeps one per connection; it
 * holds at most one key, and is only trusted for the config snapshot it was filled in (a reload re-checks the
 * account and its declared keys).
 */
export interface ApiKeySlot {
  key?: string
  entry?: unknown
}

/**
 * The gateway's API key verifier for the route's config snapshot (`context.apiKeys`): keys declared under
 * `service_accounts[].api_keys`, scrypt-hashed. A key verified before answers synchronously (a cache by digest, or
 * the connection's `slot`); a first-seen key through a promise, its scrypt work bounded gateway-wide (`busy` when
 * too many are waiting).
 */
export interface ApiKeyVerifierView {
  /** The principal of the account whose key this is (as its token would give: scopes, organization), or why not. */
  verify (key: string, slot?: ApiKeySlot): Principal | ApiKeyFailure | Promise<Principal | ApiKeyFailure>
}
