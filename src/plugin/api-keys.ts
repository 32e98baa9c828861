import type { Principal } from './request-state.js'

/** Why an API key was not accepted: unknown or wrong, its account revoked, or too many first-seen keys at once. */
export type ApiKeyFailure = 'invalid' | 'revoked' | 'busy'

/**
 * The gateway's API key verifier for the route's config snapshot (`context.apiKeys`): keys declared under
 * `service_accounts[].api_keys`, scrypt-hashed. A key verified before answers synchronously (a cache by digest);
 * a first-seen key through a promise, its scrypt work bounded gateway-wide (`busy` when too many are waiting).
 */
export interface ApiKeyVerifierView {
  /** The principal of the account whose key this is (as its token would give: scopes, organization), or why not. */
  verify (key: string): Principal | ApiKeyFailure | Promise<Principal | ApiKeyFailure>
}
