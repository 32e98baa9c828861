/** A named limit of gateway.yaml's `rate_limits`, as a policy reads it. */
export interface RateLimitSettings {
  /** What is counted: the client IP (IPv6 per /64), the caller's client id, or its organization. */
  readonly key: 'ip' | 'client' | 'organization'
  /** Requests allowed per window. */
  readonly points: number
  /** Window length in seconds. */
  readonly window_seconds: number
}

/**
 * The store-access rule's answer for an organization or store id and a caller's organization: `outside` its tree
 * (or unknown: the two are never told apart), `reachable` (in the tree), or `served` (in the tree, and a store whose
 * install is active, with the lane that serves it).
 */
export type StoreReach = 'outside' | 'reachable' | 'served'

/**
 * What a policy may read of the validated gateway.yaml (`context.settings`, and `settings` in `requires`, `check`
 * and `explain`): read-only, one per config snapshot, so it may key what a policy keeps per snapshot (a WeakMap).
 */
export interface GatewaySettings {
  /** `issuer.issuer`: the issuer of the gateway's own tokens. */
  readonly issuer: string
  /** The scope names `scopes:` declares. */
  readonly scopes: ReadonlySet<string>
  /** The organization ids `organizations:` declares (their stores not included). */
  readonly organizations: ReadonlySet<string>
  /** The named limits of `rate_limits`. */
  readonly rateLimits: Readonly<Record<string, RateLimitSettings>>
  /** `cache_store.max_bytes`: the memory every `cache` step of a snapshot shares. */
  readonly cacheStoreMaxBytes: number
  /** Whether `server.tls.client_ca_file` is set: only then are callers asked for a certificate (mutual TLS). */
  readonly clientCertificates: boolean
  /** The status of the gateway's own service account `clientId`, undefined when there is none. */
  accountStatus (clientId: string): 'active' | 'revoked' | undefined
  /** The one store-access rule: how far a caller of `organizationId` reaches the organization or store `id`. */
  reach (organizationId: string, id: string): StoreReach
  /** Whether the gateway relays the requests of service `name` to an upstream (the live service, `type: proxy`). */
  relays (service: string): boolean
}
