import type { JWK } from 'jose'
import { buildIndexes } from '../../src/config/indexes.js'
import type { Snapshot } from '../../src/runtime/snapshot.js'
import type { GatewayConfig, LaneConfig, UserTokenIssuerConfig } from '../../src/config/types.js'
import { serviceAudience, serviceIssuer, userAudience, userIssuer } from './token-mint.js'

const lane: LaneConfig = { base_url: 'http://127.0.0.1:9', connect_timeout_ms: 1000, response_timeout_ms: 1000, max_sockets: 4 }

/**
 * A small config for policy tests. Organization tree:
 * - org_parent (stores: org_store_a active with a lane, org_store_inactive, org_store_nolane)
 *   - org_child (store org_store_child)
 * - org_other (store org_store_other)
 * Accounts: svc_pay (org_parent, payments scopes), svc_child (org_child), svc_revoked (revoked), svc_other.
 */
export function testConfig (userJwks: { keys: JWK[] }, extraIssuers: UserTokenIssuerConfig[] = []): GatewayConfig {
  const account = (client_id: string, organization: string, scopes: string[], status: 'active' | 'revoked' = 'active') =>
    ({ client_id, name: client_id, secrets: [], api_keys: [], scopes, organization, token_type: 'service' as const, status })
  return {
    plugins: [],
    server: {
      host: '127.0.0.1', port: 0, trusted_proxies: [], body_limit_bytes: 1_000_000, max_header_bytes: 16_384,
      request_timeout_ms: 10_000, headers_timeout_ms: 10_000, keep_alive_timeout_ms: 5_000, shutdown_grace_ms: 1_000, startup_timeout_ms: 30_000,
      log_level: 'silent', data_dir: '/tmp/lanegate-policies-test', workers: 1, http2: false,
    },
    storage: { driver: 'sqlite', sqlite_file: ':memory:' },
    rate_limit_store: { driver: 'memory', key_prefix: 'test:', on_store_error: 'open', sync_interval_ms: 0 },
    cache_store: { max_bytes: 67108864 },
    issuer: {
      issuer: serviceIssuer, audience: serviceAudience, algorithm: 'EdDSA', key_dir: 'keys', default_lifetime_seconds: 3600,
      scope_lifetimes: {}, clock_tolerance_seconds: 5, token_rate_limit: { points: 60, window_seconds: 60 },
      failed_auth_limit: { points: 20, window_seconds: 60 }, secret_max_age_days: 90, behind_proxy: false,
    },
    scopes: {
      'commerce:payment-intents.read': { description: 'read intents' },
      'commerce:payment-intents.create': { description: 'create intents' },
      'commerce:connected-accounts.read': { description: 'read connected accounts' },
      'engage:content.view': { description: 'view content' },
    },
    organizations: [
      {
        id: 'org_parent',
        name: 'Parent',
        stores: [
          { id: 'org_store_a', name: 'A', install_active: true, lane },
          { id: 'org_store_inactive', name: 'Inactive', install_active: false, lane },
          { id: 'org_store_nolane', name: 'No lane', install_active: true },
        ],
      },
      { id: 'org_child', name: 'Child', parent: 'org_parent', stores: [{ id: 'org_store_child', name: 'Child store', install_active: true, lane }] },
      { id: 'org_other', name: 'Other', stores: [{ id: 'org_store_other', name: 'Other store', install_active: true, lane }] },
    ],
    service_accounts: [
      account('svc_pay', 'org_parent', ['commerce:payment-intents.read', 'commerce:payment-intents.create']),
      account('svc_child', 'org_child', ['commerce:payment-intents.read']),
      account('svc_revoked', 'org_parent', ['commerce:payment-intents.read'], 'revoked'),
      account('svc_other', 'org_other', ['commerce:payment-intents.read']),
    ],
    user_token_issuers: [
      { issuer: userIssuer, audience: userAudience, algorithms: ['EdDSA'], jwks: userJwks as { keys: Record<string, unknown>[] }, max_token_lifetime_seconds: 86400 },
      ...extraIssuers,
    ],
    rate_limits: {
      payments: { key: 'ip', points: 100, window_seconds: 60 },
      small: { key: 'ip', points: 3, window_seconds: 60 },
      per_client: { key: 'client', points: 2, window_seconds: 60 },
      per_org: { key: 'organization', points: 2, window_seconds: 60 },
    },
    services: {},
  }
}

let version = 0

/** A snapshot of `config` with its indexes and no chains (policy tests build their steps themselves). */
export function snapshotOf (config: GatewayConfig): Snapshot {
  version += 1
  return { version, config, indexes: buildIndexes(config), chains: new Map() }
}
