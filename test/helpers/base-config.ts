import { stringify } from 'yaml'
import type { GatewayConfig } from '../../src/config/types.js'
import { parseGatewayConfig } from '../../src/config/second-pass/load-gateway-config.js'
import { catalog } from '../../src/pipeline/registry.js'
import type { ServiceModule } from '../../src/services/service-module.js'

/**
 * A complete GatewayConfig with every key at its schema default (as a validated gateway.yaml would have them),
 * no organizations, accounts or services. Tests that build one service or policy in a bare app start here and
 * override what they need.
 */
export function baseTestConfig (overrides: Partial<GatewayConfig> = {}): GatewayConfig {
  return {
    plugins: [],
    server: {
      host: '127.0.0.1', port: 0, trusted_proxies: [], body_limit_bytes: 1048576, max_header_bytes: 16384,
      request_timeout_ms: 30000, headers_timeout_ms: 10000, keep_alive_timeout_ms: 5000, shutdown_grace_ms: 1000, startup_timeout_ms: 30000,
      log_level: 'silent', data_dir: './data', workers: 1, http2: false,
    },
    storage: { driver: 'sqlite', sqlite_file: 'lanegate.db' },
    rate_limit_store: { driver: 'memory', key_prefix: 'lanegate', on_store_error: 'open', sync_interval_ms: 0 },
    cache_store: { max_bytes: 67108864 },
    issuer: {
      issuer: 'https://auth.test', audience: 'lanegate', algorithm: 'EdDSA', key_dir: 'keys', default_lifetime_seconds: 3600,
      scope_lifetimes: {}, clock_tolerance_seconds: 5, token_rate_limit: { points: 60, window_seconds: 60 },
      failed_auth_limit: { points: 20, window_seconds: 60 }, secret_max_age_days: 90, behind_proxy: false,
    },
    scopes: {},
    organizations: [],
    service_accounts: [],
    user_token_issuers: [],
    rate_limits: {},
    services: {},
    ...overrides,
  }
}

/**
 * `config` as the gateway would run it: written out as YAML and read back through the real loader, so every
 * default (policy options, service settings) is filled by the loader alone and the result is frozen. `services`
 * are the service modules whose blocks it may hold. Their whole-config `check`s are left out: bare-service tests
 * also serve states a running gateway can reach but a start would refuse (a content folder broken after start).
 */
export async function loadTestConfig (config: GatewayConfig, services: readonly ServiceModule[]): Promise<GatewayConfig> {
  const unchecked = services.map((service): ServiceModule => ({ ...service, check: undefined }))
  const loaded = await parseGatewayConfig(stringify(config), 'test-config.yaml', { env: {} }, { ...catalog, services: unchecked })
  return loaded.config
}
