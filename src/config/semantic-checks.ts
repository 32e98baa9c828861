import { Ajv } from 'ajv'
import addFormats from 'ajv-formats'
import { formatPath, type ConfigProblem } from './config-error.js'
import { buildIndexes } from './indexes.js'
import type { GatewayConfig, PolicyEntry } from './types.js'
import type { ConfigCatalog } from './load-config.js'
import { parseSecretHash } from '../oauth/secret-hash.js'

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
 * The second validation pass: references between sections (organizations, scopes, accounts, limits), every
 * policy's options against that policy's own schema and checks, chain order (`requires`), and each service's
 * settings. Collects every problem rather than stopping at the first.
 */
export function checkSemantics (config: GatewayConfig, catalog: ConfigCatalog, now = Date.now()): { problems: LocatedProblem[], warnings: ConfigWarning[] } {
  const problems: LocatedProblem[] = []
  const warnings: ConfigWarning[] = []
  const report = (segments: (string | number)[], message: string): void => {
    problems.push({ problem: { path: formatPath(segments), message }, segments })
  }
  const indexes = buildIndexes(config)

  // Organizations and stores: unique ids, known parents, no cycles.
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

  // Scopes named anywhere must be declared.
  const knownScope = (scope: string): boolean => Object.hasOwn(config.scopes, scope)
  for (const scope of Object.keys(config.issuer.scope_lifetimes)) {
    if (!knownScope(scope)) report(['issuer', 'scope_lifetimes', scope], `unknown scope "${scope}" (declare it under scopes)`)
  }

  // Service accounts.
  const clientIds = new Set<string>()
  config.service_accounts.forEach((account, i) => {
    if (clientIds.has(account.client_id)) report(['service_accounts', i, 'client_id'], `duplicate client_id "${account.client_id}"`)
    clientIds.add(account.client_id)
    if (!indexes.organizations.has(account.organization) && !indexes.stores.has(account.organization)) {
      report(['service_accounts', i, 'organization'], `unknown organization "${account.organization}"`)
    }
    account.scopes.forEach((scope, j) => {
      if (!knownScope(scope)) report(['service_accounts', i, 'scopes', j], `unknown scope "${scope}" (declare it under scopes)`)
    })
    account.secrets.forEach((secret, j) => {
      if (parseSecretHash(secret.hash) === undefined) {
        report(['service_accounts', i, 'secrets', j, 'hash'], 'not a scrypt PHC hash; create one with `lanegate hash-secret` (never paste a plain secret)')
      }
      const created = Date.parse(`${secret.created}T00:00:00Z`)
      if (Number.isNaN(created)) {
        report(['service_accounts', i, 'secrets', j, 'created'], 'not a valid date')
      } else if (account.status === 'active' && now - created > config.issuer.secret_max_age_days * DAY_MS) {
        warnings.push({
          path: formatPath(['service_accounts', i, 'secrets', j, 'created']),
          message: `secret of "${account.client_id}" is older than ${config.issuer.secret_max_age_days} days: rotate it`,
        })
      }
    })
  })

  // Trusted user-token issuers: exactly one key source each, never the gateway's own issuer.
  config.user_token_issuers.forEach((issuer, i) => {
    const sources = [issuer.jwks, issuer.jwks_uri, issuer.development_key_dir].filter((s) => s !== undefined).length
    if (sources !== 1) report(['user_token_issuers', i], 'give exactly one of jwks, jwks_uri or development_key_dir')
    if (issuer.issuer === config.issuer.issuer) report(['user_token_issuers', i, 'issuer'], 'must differ from issuer.issuer, so no token passes both profiles')
  })

  if (config.storage.driver === 'postgres' && config.storage.postgres_url === undefined) {
    report(['storage', 'postgres_url'], 'required when driver is postgres')
  }
  if (config.rate_limit_store.driver === 'redis' && config.rate_limit_store.redis_url === undefined) {
    report(['rate_limit_store', 'redis_url'], 'required when driver is redis')
  }

  // Services: prefixes, routes, policy chains.
  const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: false })
  addFormats.default(ajv)
  const prefixes: [string, string][] = []
  for (const [serviceName, service] of Object.entries(config.services)) {
    const module = catalog.services.find((s) => s.name === serviceName)
    if (module === undefined) continue // pass 1 rejects unknown services
    for (const [other, prefix] of prefixes) {
      if (overlaps(prefix, service.prefix)) report(['services', serviceName, 'prefix'], `overlaps the prefix of service "${other}"`)
    }
    prefixes.push([serviceName, service.prefix])

    const routeIds = new Set(module.routeIds ?? [])
    for (const [routeId, chain] of Object.entries(service.routes)) {
      if (routeIds.size > 0 && !routeIds.has(routeId)) {
        report(['services', serviceName, 'routes', routeId], `unknown route "${routeId}" (service ${serviceName} has: ${[...routeIds].join(', ')})`)
        continue
      }
      const whole = [...service.policies.map((entry, i) => ({ entry, at: ['services', serviceName, 'policies', i] as (string | number)[] })),
        ...chain.map((entry, i) => ({ entry, at: ['services', serviceName, 'routes', routeId, i] as (string | number)[] }))]
      checkChain(whole, config, catalog, indexes, ajv, report)
      if (!whole.some(({ entry }) => policyName(entry) === 'auth')) {
        warnings.push({ path: formatPath(['services', serviceName, 'routes', routeId]), message: 'route has no auth policy: anyone can call it' })
      }
    }
    for (const problem of module.check?.(service, config, indexes) ?? []) {
      const segments: (string | number)[] = ['services', serviceName, ...problem.path.split('.').filter((s) => s !== '').map((s) => /^\d+$/.test(s) ? Number(s) : s)]
      report(segments, problem.message)
    }
  }
  return { problems, warnings }
}

function checkChain (chain: { entry: PolicyEntry, at: (string | number)[] }[], config: GatewayConfig, catalog: ConfigCatalog,
  indexes: ReturnType<typeof buildIndexes>, ajv: Ajv, report: (segments: (string | number)[], message: string) => void): void {
  const before = new Set<string>()
  for (const { entry, at } of chain) {
    const name = policyName(entry)
    const plugin = catalog.plugins.get(name)
    if (plugin === undefined) {
      report([...at, name], `unknown policy "${name}" (known: ${[...catalog.plugins.keys()].join(', ')})`)
      continue
    }
    const options = entry[name] ?? {}
    entry[name] = options
    const validate = ajv.compile(plugin.schema)
    if (!validate(options)) {
      for (const e of validate.errors ?? []) {
        const extra = e.keyword === 'additionalProperties' ? [(e.params as { additionalProperty: string }).additionalProperty] : []
        const segments = [...at, name, ...e.instancePath.split('/').filter((s) => s !== '').map((s) => /^\d+$/.test(s) ? Number(s) : s), ...extra]
        report(segments, e.keyword === 'additionalProperties' ? `unknown option "${extra[0]}"` : (e.message ?? 'invalid option'))
      }
      before.add(name)
      continue
    }
    for (const required of plugin.requires?.(options, config) ?? []) {
      if (!before.has(required)) report([...at, name], `policy "${name}" must come after "${required}" in the chain`)
    }
    for (const problem of plugin.check?.(options, config, indexes) ?? []) {
      report([...at, name, ...problem.path.split('/').filter((s) => s !== '').map((s) => /^\d+$/.test(s) ? Number(s) : s)], problem.message)
    }
    before.add(name)
  }
}

export function policyName (entry: PolicyEntry): string {
  return Object.keys(entry)[0] as string
}

function overlaps (a: string, b: string): boolean {
  return a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`)
}
