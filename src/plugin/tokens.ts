import type { Principal } from './request-state.js'

/**
 * What the verifier remembers of one connection: the last token by its exact text and its cache entry, so the
 * next request with the same token skips the cache key's digest. Opaque to the caller, who keeps one per socket;
 * it holds at most one token, and a hit is still checked for expiry, issuer rules and account status.
 */
export interface TokenSlot {
  token?: string
  entry?: unknown
}

/**
 * The gateway's bearer-token verifier, for the route's config snapshot (`context.tokens`): the gateway's own service
 * tokens and trusted issuers' user tokens, with its bounded cache. A cached token answers synchronously; a refused
 * one throws (or rejects with) a refusal (`isRefusal`) carrying the RFC 6750 challenge.
 */
export interface TokenVerifierView {
  verify (token: string, slot?: TokenSlot): Principal | Promise<Principal>
}
