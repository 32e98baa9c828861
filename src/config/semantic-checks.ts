import { formatPath, type ConfigProblem, type Report } from './config-error.js'
import { buildIndexes, type ConfigIndexes } from './indexes.js'
import { checkAccessLog } from './access-log-checks.js'
import { checkTelemetry } from './telemetry-checks.js'
import { checkTlsSettings } from './tls-checks.js'
import type { ListenerFiles } from './tls-files.js'
import type { GatewayConfig, PolicyEntry } from './types.js'

/** A non-fatal finding (`lanegate validate` prints them; the gateway logs them at load). */
export interface ConfigWarning {
  path: string
  line?: number
  message: string
}

export interface LocatedProblem {
  problem: ConfigProblem
  segments: (string | number)[]
}

const DAY_MS = 86_400_000

/**
 * config/'s own part of the second pass: references between sections (organizations, scopes, accounts,
 * limits). Policies, plugins, services and secret hashes are checked by the rules the pipeline passes in
 * (src/config/second-pass/config-rules.ts). Collects every problem rather than stopping at the first.
 */
export function checkReferences (config: GatewayConfig, now = Date.now()): { problems: LocatedProblem[], warnings: ConfigWarning[], listenerTls?: ListenerFiles } {
  const problems: LocatedProblem[] = []
  const warnings: ConfigWarning[] = []
  const report: Report = (segments, message) => {
    problems.push({ problem: { path: formatPath(segments), message }, segments })
  }
  const indexes = buildIndexes(config)
  checkOrganizations(config, indexes, report)
  checkScopeLifetimes(config, report)
  checkServiceAccounts(config, indexes, report, warnings, now)
  checkUserTokenIssuers(config, report)
  checkStores(config, report)
  checkServicePrefixes(config, report)
  checkAccessLog(config, report)
  checkTelemetry(config, report)
  // TLS files (the listener's, the backends'): read and checked as they will be used.
  const tls = checkTlsSettings(config, now)
  problems.push(...tls.problems)
  warnings.push(...tls.warnings)
  return { problems, warnings, listenerTls: tls.listener }
}

/** Organizations and stores: unique ids, known parents, no cycles. */
function checkOrganizations (config: GatewayConfig, indexes: ConfigIndexes, report: Report): void {
  const ids = new Set<string>()
  config.organizations.forEach((org, i) => {
    if (ids.has(org.id)) report(['organizations', i, 'id'], `duplicate organization or store id "${org.id}"`)
    ids.add(org.id)
    org.stores.forEach((store, j) => {
      if (ids.has(store.id)) report(['organizations', i, 'stores', j, 'id'], `duplicate organization or store id "${store.id}"`)
      ids.add(store.id)
    })
  })
  config.organizations.forEach((org, i) => {
    if (org.parent === undefined) return
    if (!indexes.organizations.has(org.parent)) {
      report(['organizations', i, 'parent'], `unknown organization "${org.parent}"`)
      return
    }
    const seen = new Set([org.id])
    for (let p: string | undefined = org.parent; p !== undefined; p = indexes.organizations.get(p)?.parent) {
      if (seen.has(p)) {
        report(['organizations', i, 'parent'], 'organization parents form a cycle')
        break
      }
      seen.add(p)
    }
  })
}

function knownScope (config: GatewayConfig, scope: string): boolean {
  return Object.hasOwn(config.scopes, scope)
}

/** Scopes named under issuer.scope_lifetimes must be declared. */
function checkScopeLifetimes (config: GatewayConfig, report: Report): void {
  for (const scope of Object.keys(config.issuer.scope_lifetimes)) {
    if (!knownScope(config, scope)) report(['issuer', 'scope_lifetimes', scope], `unknown scope "${scope}" (declare it under scopes)`)
  }
}

/** Service accounts: unique client ids, known organization and scopes, valid dates; old secrets warned about. */
function checkServiceAccounts (config: GatewayConfig, indexes: ConfigIndexes, report: Report, warnings: ConfigWarning[], now: number): void {
  const clientIds = new Set<string>()
  config.service_accounts.forEach((account, i) => {
    if (clientIds.has(account.client_id)) report(['service_accounts', i, 'client_id'], `duplicate client_id "${account.client_id}"`)
    clientIds.add(account.client_id)
    if (!indexes.organizations.has(account.organization) && !indexes.stores.has(account.organization)) {
      report(['service_accounts', i, 'organization'], `unknown organization "${account.organization}"`)
    }
    account.scopes.forEach((scope, j) => {
      if (!knownScope(config, scope)) report(['service_accounts', i, 'scopes', j], `unknown scope "${scope}" (declare it under scopes)`)
    })
    for (const [list, what] of [['secrets', 'secret'], ['api_keys', 'API key']] as const) {
      account[list].forEach((secret, j) => {
        const created = Date.parse(`${secret.created}T00:00:00Z`)
        if (Number.isNaN(created)) {
          report(['service_accounts', i, list, j, 'created'], 'not a valid date')
        } else if (account.status === 'active' && now - created > config.issuer.secret_max_age_days * DAY_MS) {
          warnings.push({
            path: formatPath(['service_accounts', i, list, j, 'created']),
            message: `${what} of "${account.client_id}" is older than ${config.issuer.secret_max_age_days} days: rotate it`,
          })
        }
      })
    }
  })
}

/** Trusted user-token issuers: exactly one key source each, never the gateway's own issuer. */
function checkUserTokenIssuers (config: GatewayConfig, report: Report): void {
  config.user_token_issuers.forEach((issuer, i) => {
    const sources = [issuer.jwks, issuer.jwks_uri, issuer.discovery_url, issuer.development_key_dir].filter((s) => s !== undefined).length
    if (sources > 1 || (sources === 0 && issuer.introspection === undefined)) {
      report(['user_token_issuers', i], 'give exactly one of jwks, jwks_uri, discovery_url or development_key_dir (or only introspection, for an issuer of opaque tokens only)')
    }
    if (issuer.introspection !== undefined && issuer.claims === undefined) report(['user_token_issuers', i, 'introspection'], 'needs claims: an introspection answer is read through the issuer\'s claims block')
    if (issuer.introspection !== undefined && config.user_token_issuers.findIndex((other) => other.introspection !== undefined) !== i) {
      report(['user_token_issuers', i, 'introspection'], 'only one issuer may introspect: an opaque token does not say whose it is')
    }
    if (issuer.issuer === config.issuer.issuer) report(['user_token_issuers', i, 'issuer'], 'must differ from issuer.issuer, so no token passes both profiles')
  })
}

/** The store and the limit store have the URL their driver needs. */
function checkStores (config: GatewayConfig, report: Report): void {
  if (config.storage.driver === 'postgres' && config.storage.postgres_url === undefined) {
    report(['storage', 'postgres_url'], 'required when driver is postgres')
  }
  if (config.rate_limit_store.driver === 'redis' && config.rate_limit_store.redis_url === undefined) {
    report(['rate_limit_store', 'redis_url'], 'required when driver is redis')
  }
  // With the memory driver it applies to the workers of server.workers (counted in the primary); one process
  // counts every request in itself already.
  if (config.rate_limit_store.driver === 'memory' && config.rate_limit_store.sync_interval_ms > 0 && config.server.workers === 1) {
    report(['rate_limit_store', 'sync_interval_ms'], 'only applies to driver redis, or to the memory driver with server.workers > 1 (one process counts every request in itself already)')
  }
}

/** Services: prefixes may not overlap (each service's routes and chains are the pipeline's to check). */
function checkServicePrefixes (config: GatewayConfig, report: Report): void {
  const prefixes: [string, string][] = []
  for (const [serviceName, service] of Object.entries(config.services)) {
    for (const [other, prefix] of prefixes) {
      if (overlaps(prefix, service.prefix)) report(['services', serviceName, 'prefix'], `overlaps the prefix of service "${other}"`)
    }
    prefixes.push([serviceName, service.prefix])
  }
}

export function policyName (entry: PolicyEntry): string {
  return Object.keys(entry)[0] as string
}

function overlaps (a: string, b: string): boolean {
  return a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`)
}
