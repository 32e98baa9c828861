import type { FastifyBaseLogger } from 'fastify'
import type { JWK, JWTVerifyGetKey, CryptoKey } from 'jose'
import type { GatewayConfig } from '../config/types.js'
import type { ConfigIndexes } from '../config/indexes.js'
import type { Principal } from './request-context.js'
import type { TokenSlot } from '../plugin/tokens.js'
import type { LimiterRegistry } from '../limits/limiter-registry-interface.js'
import type { Store } from '../store/store.js'
import type { SharedUpstreams } from '../upstream/registry.js'

/** The gateway's own signing keys and the JWKS it publishes. */
export interface KeyStore {
  /** The key new tokens are signed with. */
  readonly signing: { kid: string, alg: string, privateKey: CryptoKey }
  /** Public keys only (`kid`, `use:'sig'`, `alg` on each), for `/.well-known/jwks.json`. */
  jwks (): { keys: JWK[] }
  /** jose key resolver over the published keys, for verifying the gateway's own tokens. */
  readonly resolve: JWTVerifyGetKey
}

/** Verifies bearer tokens (the gateway's service tokens and trusted issuers' user tokens), with a bounded cache. */
export interface TokenVerifier {
  /**
   * Resolves the principal of a valid token, or throws GatewayError `unauthenticated`. `config` and `indexes` are
   * the request's snapshot: a service account revoked or deleted there fails even on a cached token.
   */
  verify (token: string, config: GatewayConfig, indexes: ConfigIndexes): Promise<Principal>
  /**
   * The same answer, but a cached token's principal comes back synchronously (no promise on the hot path); a
   * token that must be verified first comes back as a promise. May throw synchronously. `slot` is the caller's
   * memo for one connection (see TokenSlot).
   */
  verifyFast (token: string, config: GatewayConfig, indexes: ConfigIndexes, slot?: TokenSlot): Principal | Promise<Principal>
}

/** What the verifier remembers of one connection (declared by the contract: `context.tokens`). */
export type { TokenSlot }

import type { ApiKeyFailure, ApiKeySlot } from '../plugin/api-keys.js'
export type { ApiKeyFailure, ApiKeySlot }

/** Verifies API keys (`service_accounts[].api_keys`), with a bounded cache of verified and of wrong keys. */
export interface ApiKeyVerifier {
  /**
   * The principal of the account whose key this is (as its token would give: scopes, organization), or why not.
   * A key verified before answers synchronously; a first-seen key through a promise (bounded scrypt work).
   * `config` and `indexes` are the request's snapshot: a key or account removed or revoked there fails at once.
   * `slot` is the caller's memo for one connection (see ApiKeySlot).
   */
  verify (key: string, config: GatewayConfig, indexes: ConfigIndexes, slot?: ApiKeySlot): Principal | ApiKeyFailure | Promise<Principal | ApiKeyFailure>
}
export type { LimiterRegistry }

/** Long-lived objects shared by every snapshot. Built once at boot; closed at shutdown. */
export interface SharedResources {
  readonly logger: FastifyBaseLogger
  readonly keys: KeyStore
  readonly tokens: TokenVerifier
  /** API keys (the `api-key` policy); its caches survive reloads. */
  readonly apiKeys: ApiKeyVerifier
  readonly limiters: LimiterRegistry
  readonly store: Store
  /** Upstream connection pools shared by services (lanes: live relay and fan-out), closed at shutdown. */
  readonly upstreams: SharedUpstreams
}
