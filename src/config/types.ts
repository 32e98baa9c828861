/**
 * The shape of `gateway.yaml` after `${ENV}` substitution and validation. `docs/configuration.md` documents
 * every key; `src/config/schema.ts` is the JSON Schema that checks it (first pass), and each policy plugin and
 * service module checks its own options (second pass).
 */
import type { EnvelopeName } from '../errors/envelopes.js'

export interface GatewayConfig {
  /** Outside policy plugins (module paths relative to the config file's folder, or package names). */
  plugins: string[]
  server: ServerConfig
  /**
   * The admin listener (/metrics, /healthz, /readyz): absent means the default `127.0.0.1:9464`; `false` turns it
   * and metrics collection off. Read it with `adminSettings` (src/observability/admin-settings.ts).
   */
  admin?: AdminConfig | false
  storage: StorageConfig
  rate_limit_store: RateLimitStoreConfig
  /** Memory of the `cache` policy (all routes together); a reload empties it. */
  cache_store: { max_bytes: number }
  issuer: IssuerConfig
  /** Every scope name the gateway knows, with a description. A scope named anywhere else must be listed here. */
  scopes: Record<string, { description: string }>
  organizations: OrganizationConfig[]
  service_accounts: ServiceAccountConfig[]
  user_token_issuers: UserTokenIssuerConfig[]
  /** Named rate limits; routes refer to them by name, and routes naming the same limit share its counters. */
  rate_limits: Record<string, RateLimitConfig>
  /** Service blocks by service name (`payments`, `content`, `live`, ...). A service not listed is not served. */
  services: Record<string, ServiceConfig>
}

export interface ServerConfig {
  host: string
  port: number
  /** CIDRs (or addresses) of load balancers whose X-Forwarded-For is believed. Never `true`. */
  trusted_proxies: string[]
  body_limit_bytes: number
  max_header_bytes: number
  request_timeout_ms: number
  headers_timeout_ms: number
  keep_alive_timeout_ms: number
  /** How long SIGTERM waits for in-flight requests before closing. */
  shutdown_grace_ms: number
  /** How long start-up retries PostgreSQL and the rate-limit Redis before exiting 1. */
  startup_timeout_ms: number
  log_level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'
  /** Directory for the SQLite file and generated keys. */
  data_dir: string
  /** Worker processes on the port (node:cluster); `auto` is one per core; 1 (default) runs no primary. */
  workers: number | 'auto'
  /** HTTPS instead of plain HTTP (docs/tls.md); absent: plain HTTP. */
  tls?: ServerTlsConfig
  /** ALPN h2 on the TLS listener, HTTP/1.1 still served (needs `tls`). Absent means false. */
  http2?: boolean
}

/** `server.tls`: the listener's certificate, key, oldest protocol and (mutual TLS) the callers' CA. */
export interface ServerTlsConfig {
  /** PEM, leaf first then intermediates; absolute once loaded (relative to the config file's folder). */
  cert_file: string
  key_file: string
  min_version: 'TLSv1.2' | 'TLSv1.3'
  /** Ask callers for a certificate signed by this CA (the `client-certificate` policy then checks it). */
  client_ca_file?: string
}

/** TLS to a backend (a `type: proxy` block's `upstream.tls`, a store lane's `lane.tls`). Paths absolute once loaded. */
export interface BackendTlsConfig {
  /** Trust this CA (PEM bundle), in addition to the system's (or instead of, with `only_ca`). */
  ca_file?: string
  only_ca?: boolean
  /** A client certificate presented to the backend (with `key_file`). */
  cert_file?: string
  key_file?: string
  /** SNI and the name the backend's certificate is checked against (default: the target URL's host name). */
  servername?: string
  /** false: the backend's certificate is not verified (logged as a warning at every start and reload). */
  verify?: boolean
}

export interface AdminConfig {
  host?: string
  port?: number
  /** Required off loopback: a bearer token read from an environment variable, or HTTP Basic with a scrypt hash. */
  auth?: AdminAuthConfig
}

/** Exactly one of the two. */
export interface AdminAuthConfig {
  /** The environment variable holding the bearer token (read at start). */
  token_env?: string
  basic?: { user: string, password_hash: string }
}

export interface StorageConfig {
  driver: 'sqlite' | 'postgres'
  /** SQLite file; relative paths are resolved against server.data_dir. */
  sqlite_file: string
  postgres_url?: string
  /** Schema the tables live in (created when missing); default: the server's search_path. */
  postgres_schema?: string
}

export interface RateLimitStoreConfig {
  driver: 'memory' | 'redis'
  redis_url?: string
  key_prefix: string
  /** What happens when the limiter store fails: `open` lets the request through without headers, `closed` answers 503. */
  on_store_error: 'open' | 'closed'
  /**
   * Redis only. 0: every counted request is one Redis round trip (exact). > 0: route limits are pre-counted in
   * the process and synchronised with Redis every this many milliseconds (bounded over-admission, see
   * docs/performance.md "Scale-out"). The schema fills in 0; optional so configs built in code (tests, plugin
   * harnesses) need not name it, and absent means the same 0.
   */
  sync_interval_ms?: number
}

export interface IssuerConfig {
  /** The `iss` of issued tokens and the RFC 8414 `issuer`. */
  issuer: string
  /** issuer.issuer is a load balancer's or proxy's address in front of this gateway: no port-mismatch warning. */
  behind_proxy?: boolean
  /** The `aud` of issued tokens, required on every bearer token. */
  audience: string
  algorithm: 'EdDSA' | 'ES256' | 'RS256'
  /** Where signing keys live; a key is generated here on first start when none exists. Relative to data_dir. */
  key_dir: string
  /** Lifetime when no granted scope sets one. */
  default_lifetime_seconds: number
  /** Lifetime per scope; a token gets the shortest among its granted scopes. */
  scope_lifetimes: Record<string, number>
  clock_tolerance_seconds: number
  /** The spec's 60 requests per minute per client id (counted on successful client authentication). */
  token_rate_limit: { points: number, window_seconds: number }
  /** Failed client authentications allowed per IP before 429 (brute-force brake). */
  failed_auth_limit: { points: number, window_seconds: number }
  /** `lanegate validate` warns about secrets older than this. */
  secret_max_age_days: number
}

export interface OrganizationConfig {
  id: string
  name: string
  /** Parent organization: the parent's callers reach this organization and its stores too. */
  parent?: string
  connected_account?: ConnectedAccountConfig
  stores: StoreConfig[]
}

export interface ConnectedAccountConfig {
  /** Hashkey the API shows as connected_account_id. */
  id: string
  /** The processor's own account id (Connect mode). */
  processor_account_id: string
}

export interface StoreConfig {
  /** Store organization id, `org_…`. */
  id: string
  name: string
  /** A store without an active install answers 404 store_not_found. */
  install_active: boolean
  connected_account?: ConnectedAccountConfig
  lane?: LaneConfig
}

export interface LaneConfig {
  /** http(s)://host:port[/base]; requests are relayed below this URL only. */
  base_url: string
  /** Sent to the lane as `Authorization`; the caller's own Authorization never is. */
  credential?: string
  connect_timeout_ms: number
  response_timeout_ms: number
  max_sockets: number
  /** TLS to an https lane: private CA, client certificate, server name. */
  tls?: BackendTlsConfig
}

export interface ServiceAccountSecret {
  /** PHC string from `lanegate hash-secret`. */
  hash: string
  /** Date the secret was issued (YYYY-MM-DD); secrets older than issuer.secret_max_age_days are warned about. */
  created: string
}

export interface ServiceAccountConfig {
  client_id: string
  name: string
  /** More than one during rotation; remove the old one to reject it. */
  secrets: ServiceAccountSecret[]
  /** Hashed API keys accepted by the `api-key` policy for this account (same shape as a secret). */
  api_keys: ServiceAccountSecret[]
  scopes: string[]
  organization: string
  token_type: 'service'
  status: 'active' | 'revoked'
}

export interface UserTokenIssuerConfig {
  issuer: string
  audience: string
  algorithms: string[]
  /** Inline public keys. */
  jwks?: { keys: Record<string, unknown>[] }
  /** Remote JWKS (fetched with caching and cooldown). */
  jwks_uri?: string
  /** A development issuer whose key pair is generated under this directory (relative to data_dir). */
  development_key_dir?: string
  /** Longest accepted token lifetime (`exp - iat`, seconds; default 86400); longer-lived tokens get 401. */
  max_token_lifetime_seconds?: number
}

export interface RateLimitConfig {
  key: 'ip' | 'client' | 'organization'
  points: number
  window_seconds: number
}

/** One policy in a chain: `{ <policy name>: <options> }`. */
export type PolicyEntry = Record<string, unknown>

/** One `routes:` entry: a policy chain, or (services whose routes come from settings) an object holding one. */
export type RouteEntry = PolicyEntry[] | { readonly policies: PolicyEntry[], readonly [key: string]: unknown }

/** The policy chain of a `routes:` entry. */
export function routePolicies (entry: RouteEntry): PolicyEntry[] {
  return Array.isArray(entry) ? entry : entry.policies
}

export interface ServiceConfig {
  /** Path prefix every route of the service is served under. */
  prefix: string
  envelope: EnvelopeName
  /** Policies run on every route of the service, before the route's own. */
  policies: PolicyEntry[]
  /**
   * Route id → that route's own policies. A route not listed is not served. A service whose routes come from its
   * settings gives each entry its own shape, with the chain under `policies` (see `routePolicies`).
   */
  routes: Record<string, RouteEntry>
  /** Service-specific settings, checked by the service module's own schema. */
  [setting: string]: unknown
}
