/**
 * The shape of `gateway.yaml` after `${ENV}` substitution, validation and the loader's defaults. Every type here is
 * derived (TypeBox `Static`) from the schema that checks the file, `src/config/schema.ts`, which holds the one
 * declaration (with its description) of each key; `docs/configuration.md` documents them. Each policy plugin and
 * service module checks its own options (second pass); `services/service-settings.ts` types a block's settings.
 */
import type { Static } from '@sinclair/typebox'
import type { backendTls, configSections, PolicyEntry, RouteEntry, serviceBlockShape } from './schema.js'

export type { PolicyEntry, RouteEntry } from './schema.js'

type Sections = Static<typeof configSections>

/** `T` with the keys `K` present: what the loader fills in after validation, where the schema has no default. */
type Filled<T, K extends keyof T> = Omit<T, K> & { [P in K]-?: Exclude<T[P], undefined> }

/** The whole config as loaded: the schema's sections, and the two places the schema alone does not give the type. */
export interface GatewayConfig extends Omit<Sections, 'issuer'> {
  issuer: IssuerConfig
  /**
   * Service blocks by service name (`payments`, `content`, `live`, ...). A service not listed is not served. The
   * schema of a block comes from its service module at load, so only the shared keys are typed here.
   */
  services: Record<string, ServiceConfig>
}

/** `issuer`, with `issuer.issuer` present: the loader fills it in when the file gives none (config/default-issuer.ts). */
export type IssuerConfig = Filled<Sections['issuer'], 'issuer'>

export type ServerConfig = Sections['server']
export type ServerTlsConfig = NonNullable<ServerConfig['tls']>
/** TLS to a backend (a `type: proxy` block's `upstream.tls`, a store lane's `lane.tls`). Paths absolute once loaded. */
export type BackendTlsConfig = Static<typeof backendTls>
/** The admin listener's block; `admin: false` and an absent `admin` are read with `adminSettings` (observability/admin-settings.ts). */
export type AdminConfig = Exclude<Sections['admin'], false | undefined>
export type AdminAuthConfig = NonNullable<AdminConfig['auth']>
export type StorageConfig = Sections['storage']
export type RateLimitStoreConfig = Sections['rate_limit_store']
export type OrganizationConfig = Sections['organizations'][number]
export type ConnectedAccountConfig = NonNullable<OrganizationConfig['connected_account']>
export type StoreConfig = OrganizationConfig['stores'][number]
export type LaneConfig = NonNullable<StoreConfig['lane']>
export type ServiceAccountConfig = Sections['service_accounts'][number]
export type ServiceAccountSecret = ServiceAccountConfig['secrets'][number]
export type UserTokenIssuerConfig = Sections['user_token_issuers'][number]
export type RateLimitConfig = Sections['rate_limits'][string]
export type AccessLogConfig = NonNullable<Sections['access_log']>
export type AccessLogSinkConfig = AccessLogConfig['sinks'][number]
export type TracesConfig = NonNullable<NonNullable<Sections['telemetry']>['traces']>

/**
 * One service block: the keys every service has (prefix, envelope, policies, routes) and its own settings, which
 * the service module's schema checks and `serviceSettings` (services/service-settings.ts) types.
 */
export interface ServiceConfig extends Static<typeof serviceBlockShape> {
  [setting: string]: unknown
}

/** The policy chain of a `routes:` entry. */
export function routePolicies (entry: RouteEntry): PolicyEntry[] {
  return Array.isArray(entry) ? entry : entry.policies
}
