import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { GatewayConfig, ServiceAccountConfig } from '../../src/config/types.js'
import { hashSecret } from '../../src/secrets/secret-hash.js'

/** The plaintext secrets of the test accounts (hashed with scrypt ln=10 for speed). */
export const SECRETS = {
  content: 'content-secret-0123456789abcdef',
  checkout: 'checkout-secret-0123456789abcdef',
  mixed: 'mixed-secret-0123456789abcdef',
  rotatingOld: 'rotating-old-secret-0123456789',
  rotatingNew: 'rotating-new-secret-0123456789',
  revoked: 'revoked-secret-0123456789abcdef',
  /** Has every character RFC 6749 Appendix B encoding matters for: `:`, `%`, `+`, space, and non-ASCII. */
  special: 'p:a%2Fs+s wörd:%',
  plain: 'plain-secret-0123456789abcdef',
  /** 80 bytes, differing from `longTwin` only after byte 72 (bcrypt would truncate; RELIABILITY G2). */
  long: 'L'.repeat(76) + 'AAAA',
  longTwin: 'L'.repeat(76) + 'BBBB',
} as const

export const CONTENT_SCOPES = ['engage:content.view', 'engage:circulars.view']
export const PAYMENT_SCOPES = ['commerce:payment-intents.read', 'commerce:payment-intents.create', 'commerce:connected-accounts.read']

const LOG_N = 10

async function account (clientId: string, scopes: string[], secrets: string[], status: 'active' | 'revoked' = 'active'): Promise<ServiceAccountConfig> {
  return {
    client_id: clientId,
    name: `${clientId} (test)`,
    secrets: await Promise.all(secrets.map(async (s) => ({ hash: await hashSecret(s, LOG_N), created: '2026-01-15' }))),
    api_keys: [],
    scopes,
    organization: 'org_acme',
    token_type: 'service',
    status,
  }
}

export interface OauthConfigOptions {
  /** Default: a fresh temporary directory. */
  dataDir?: string
  issuer?: string
  algorithm?: 'EdDSA' | 'ES256' | 'RS256'
}

/**
 * A whole GatewayConfig for the OAuth tests. Accounts:
 * - `content-reader`: the two content scopes (86400 s each);
 * - `checkout`: the three payment scopes (3600 s);
 * - `mixed`: content and payment scopes (shortest wins: 3600 s);
 * - `rotating`: two secrets, both valid;
 * - `revoked`: status revoked;
 * - `special`: a secret with `:`, `%`, `+`, space;
 * - `plain`: only `engage:content.create`, which has no lifetime entry (default 1800 s);
 * - `long`: an 80-byte secret.
 */
export async function buildOauthConfig (options: OauthConfigOptions = {}): Promise<GatewayConfig> {
  const dataDir = options.dataDir ?? await mkdtemp(join(tmpdir(), 'lanegate-oauth-'))
  return {
    plugins: [],
    server: {
      host: '127.0.0.1',
      port: 0,
      trusted_proxies: [],
      body_limit_bytes: 1024 * 1024,
      max_header_bytes: 16384,
      request_timeout_ms: 30_000,
      headers_timeout_ms: 10_000,
      keep_alive_timeout_ms: 5_000,
      shutdown_grace_ms: 1_000,
      startup_timeout_ms: 30000,
      log_level: 'debug',
      data_dir: dataDir,
      workers: 1, http2: false,
    },
    storage: { driver: 'sqlite', sqlite_file: 'lanegate.sqlite' },
    rate_limit_store: { driver: 'memory', key_prefix: 'test:', on_store_error: 'open', sync_interval_ms: 0 },
    cache_store: { max_bytes: 67108864 },
    issuer: {
      issuer: options.issuer ?? 'https://auth.lanegate.test',
      audience: 'lanegate',
      algorithm: options.algorithm ?? 'EdDSA',
      key_dir: 'keys',
      default_lifetime_seconds: 1800,
      scope_lifetimes: {
        'engage:content.view': 86400,
        'engage:circulars.view': 86400,
        'commerce:payment-intents.read': 3600,
        'commerce:payment-intents.create': 3600,
        'commerce:connected-accounts.read': 3600,
      },
      clock_tolerance_seconds: 5,
      token_rate_limit: { points: 60, window_seconds: 60 },
      failed_auth_limit: { points: 5, window_seconds: 60 },
      secret_max_age_days: 90, behind_proxy: false,
    },
    scopes: {
      'commerce:payment-intents.read': { description: 'read intents' },
      'commerce:payment-intents.create': { description: 'create intents' },
      'commerce:connected-accounts.read': { description: 'read connected accounts' },
      'engage:content.view': { description: 'view content' },
      'engage:circulars.view': { description: 'view circulars' },
      'engage:content.create': { description: 'create content' },
    },
    organizations: [{ id: 'org_acme', name: 'Acme', stores: [] }],
    service_accounts: await Promise.all([
      account('content-reader', CONTENT_SCOPES, [SECRETS.content]),
      account('checkout', PAYMENT_SCOPES, [SECRETS.checkout]),
      account('mixed', [...CONTENT_SCOPES, ...PAYMENT_SCOPES], [SECRETS.mixed]),
      account('rotating', CONTENT_SCOPES, [SECRETS.rotatingOld, SECRETS.rotatingNew]),
      account('revoked', CONTENT_SCOPES, [SECRETS.revoked], 'revoked'),
      account('special', CONTENT_SCOPES, [SECRETS.special]),
      account('plain', ['engage:content.create'], [SECRETS.plain]),
      account('long', CONTENT_SCOPES, [SECRETS.long]),
    ]),
    user_token_issuers: [{ issuer: 'https://users.lanegate.test', audience: 'lanegate', algorithms: ['EdDSA'], development_key_dir: 'dev-users', max_token_lifetime_seconds: 86400 }],
    rate_limits: {},
    services: {},
  }
}
