import type { Report } from '../config-error.js'
import type { GatewayConfig } from '../types.js'
import { parseSecretHash } from '../../secrets/secret-hash.js'


/** Whether `host` only accepts connections from this machine (127.0.0.0/8, ::1, localhost). */
export function isLoopbackHost (host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase()
  return bare === 'localhost' || bare === '::1' || bare === '::ffff:127.0.0.1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare)
}

/**
 * The admin listener serves the console (routes, limits, upstreams, reload errors): safe by default on loopback,
 * and anywhere else only behind `admin.auth`. Checked with the config, so `lanegate validate` says it too and
 * `lanegate start` stops before it listens.
 */
export function checkAdminAuth (config: GatewayConfig, report: Report): void {
  const admin = config.admin
  if (admin === false || admin === undefined) return
  if (admin.host !== undefined && !isLoopbackHost(admin.host) && admin.auth === undefined) {
    report(['admin', 'host'], `the admin listener on ${admin.host} (not a loopback address) needs admin.auth: a bearer token (auth: { token_env: NAME }) or HTTP Basic (auth: { basic: { user, password_hash } }); or keep host 127.0.0.1`)
  }
  const hash = admin.auth?.basic?.password_hash
  if (hash !== undefined && parseSecretHash(hash) === undefined) {
    report(['admin', 'auth', 'basic', 'password_hash'], 'not a scrypt PHC hash; create one with `lanegate hash-secret` (never paste a plain password)')
  }
}
