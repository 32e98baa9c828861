import type { FastifyBaseLogger } from 'fastify'
import type { JWK, JWTVerifyGetKey, CryptoKey } from 'jose'
import type { RateLimiterAbstract } from 'rate-limiter-flexible'
import type { GatewayConfig, RateLimitConfig } from '../config/types.js'
import type { ConfigIndexes } from '../config/indexes.js'
import type { Principal } from './request-context.js'
import type { Store } from '../store/store.js'

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
}

/** Rate limiters by name; the same name and settings give the same limiter across reloads, so counts survive. */
export interface LimiterRegistry {
  get (name: string, config: RateLimitConfig): RateLimiterAbstract
  /** Whether a limiter store error lets requests through (`open`) or answers 503 (`closed`). */
  readonly onStoreError: 'open' | 'closed'
}

/** Long-lived objects shared by every snapshot. Built once at boot; closed at shutdown. */
export interface SharedResources {
  readonly logger: FastifyBaseLogger
  readonly keys: KeyStore
  readonly tokens: TokenVerifier
  readonly limiters: LimiterRegistry
  readonly store: Store
}
