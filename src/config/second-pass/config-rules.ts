import { formatPath, type Report } from '../config-error.js'
import { gatewaySettings } from '../gateway-settings.js'
import type { ConfigIndexes } from '../indexes.js'
import type { ConfigRules, SecondPass } from '../load-config.js'
import type { ServiceSchema } from '../schema.js'
import type { ConfigWarning, LocatedProblem } from '../semantic-checks.js'
import { policyName } from '../semantic-checks.js'
import { routePolicies, type GatewayConfig, type PolicyEntry } from '../types.js'
import { parseSecretHash } from '../../secrets/secret-hash.js'
import { checkAdminAuth } from './admin-auth-rules.js'
import { declaredRoutes, moduleForService, type ServiceModule } from '../../services/service-module.js'
import type { GatewaySettings } from '../../plugin/gateway-settings.js'
import type { PolicyPlace } from '../../plugin/policy.js'
import { loadOutsidePlugins } from '../../pipeline/load-plugins.js'
import { checkPolicyOptions } from '../../plugin/options.js'
import type { Catalog } from '../../pipeline/registry.js'

/**
 * The rules gateway.yaml is validated by, for config/'s loader: the services' schemas for the first pass, and for
 * the second the checks config/ cannot make without importing what sits above it: secret hashes, `plugins:`,
 * every policy chain (options against each policy's schema, its `check`, chain order) and each service's routes
 * and settings.
 *
 * `loadPlugins: false` (a reload) validates against `base` as it is: the policies loaded at start stay the ones
 * a running gateway knows, so a changed `plugins:` list is a restart-required change.
 */
export function configRules (base: Catalog, options: { loadPlugins?: boolean } = {}): ConfigRules<Catalog> {
  const loadPlugins = options.loadPlugins ?? true
  return {
    services: base.services.map(serviceSchema),
    async check (config, context): Promise<SecondPass<Catalog>> {
      const problems: LocatedProblem[] = []
      const warnings: ConfigWarning[] = []
      const report: Report = (segments, message) => { problems.push({ problem: { path: formatPath(segments), message }, segments }) }
      checkSecretHashes(config, report)
      checkAdminAuth(config, report)
      const catalog = loadPlugins ? await loadOutsidePlugins(base, config.plugins, context.baseDir, report) : base
      const loadedAtStart = new Set(base.outside.values())
      const added = loadPlugins ? [] : config.plugins.filter((reference) => !loadedAtStart.has(reference))
      checkServices(config, catalog, context.indexes, report, warnings, added)
      return { problems, warnings, catalog }
    },
  }
}

function serviceSchema (module: ServiceModule): ServiceSchema {
  return {
    name: module.name,
    description: module.description,
    settings: module.settingsSchema,
    required: module.requiredSettings,
    routeEntry: module.routeEntrySchema,
    typed: module.typed,
  }
}

function checkSecretHashes (config: GatewayConfig, report: Report): void {
  config.service_accounts.forEach((account, i) => {
    for (const [list, what] of [['secrets', 'secret'], ['api_keys', 'key']] as const) {
      account[list].forEach((secret, j) => {
        if (parseSecretHash(secret.hash) === undefined) {
          report(['service_accounts', i, list, j, 'hash'], `not a scrypt PHC hash; create one with \`lanegate hash-secret\` (never paste a plain ${what})`)
        }
      })
    }
  })
}

/**
 * `cache` answers from memory in place of everything after it, so it must end the chain: then every step that may
 * refuse (auth, scope, organization, rate-limit…) has run before a cached answer is served.
 */
function checkCacheIsLast (chain: readonly Placed[], report: Report): void {
  const at = chain.findIndex(({ entry }) => policyName(entry) === 'cache')
  if (at !== -1 && at !== chain.length - 1) {
    report([...(chain[at] as Placed).at, 'cache'], 'policy "cache" must be the last of the chain (service policies, then the route\'s): a cached answer skips every step after it')
  }
}

/** A chain entry and where it sits in the file. */
interface Placed { entry: PolicyEntry, at: (string | number)[] }

/**
 * Each service's route ids against its declared routes, its chains, and its own check. A service-level policy
 * is checked once (not once per route); each route's own policies are checked after the service's ones.
 */
function checkServices (config: GatewayConfig, catalog: Catalog, indexes: ConfigIndexes, report: Report, warnings: ConfigWarning[],
  addedPlugins: readonly string[]): void {
  const settings = gatewaySettings(config)
  for (const [serviceName, service] of Object.entries(config.services)) {
    const module = moduleForService(catalog.services, serviceName, service)
    if (module === undefined) continue // pass 1 reports unknown services and types
    const declared = new Set(declaredRoutes(module, service).map((route) => route.id))
    const servicePolicies: Placed[] = service.policies.map((entry, i) => ({ entry, at: ['services', serviceName, 'policies', i] }))
    const before = checkChain(servicePolicies, new Set(), settings, catalog, report, addedPlugins)
    for (const [routeId, routeEntry] of Object.entries(service.routes)) {
      if (!declared.has(routeId)) {
        report(['services', serviceName, 'routes', routeId], `unknown route "${routeId}" (service ${serviceName} has: ${[...declared].join(', ')})`)
        continue
      }
      const atChain = Array.isArray(routeEntry) ? ['services', serviceName, 'routes', routeId] : ['services', serviceName, 'routes', routeId, 'policies']
      const own = routePolicies(routeEntry).map((entry, i): Placed => ({ entry, at: [...atChain, i] }))
      const ran = checkChain(own, before, settings, catalog, report, addedPlugins)
      checkCacheIsLast([...servicePolicies, ...own], report)
      if (!ran.has('auth')) {
        warnings.push({ path: formatPath(['services', serviceName, 'routes', routeId]), message: 'route has no auth policy: anyone can call it' })
      }
    }
    for (const problem of module.check?.(service, config, indexes) ?? []) {
      report(['services', serviceName, ...splitDotted(problem.path)], problem.message)
    }
  }
}

/**
 * Checks one chain, given the policies that ran before it (a route's chain follows its service's). Fills each
 * entry's defaults (ajv `useDefaults`; the config is frozen only after this pass) and returns the names that ran.
 */
function checkChain (chain: Placed[], ranBefore: ReadonlySet<string>, settings: GatewaySettings, catalog: Catalog,
  report: Report, addedPlugins: readonly string[]): Set<string> {
  const before = new Set(ranBefore)
  for (const { entry, at } of chain) {
    const name = policyName(entry)
    const plugin = catalog.plugins.get(name)
    if (plugin === undefined) {
      // On a reload, a policy from a plugin added to `plugins:` since start is unknown because plugins load only at start.
      const restart = addedPlugins.length === 0
        ? ''
        : `; plugins: lists ${addedPlugins.map((r) => `"${r}"`).join(', ')} since start, and plugins are loaded only at start: restart the gateway to use ${addedPlugins.length === 1 ? 'it' : 'them'}`
      report([...at, name], `unknown policy "${name}" (known: ${[...catalog.plugins.keys()].join(', ')})${restart}`)
      continue
    }
    const options = entry[name] ?? {}
    entry[name] = options
    const errors = checkPolicyOptions(plugin, options)
    if (errors.length > 0) {
      for (const e of errors) {
        const extra = e.keyword === 'additionalProperties' ? [(e.params as { additionalProperty: string }).additionalProperty] : []
        report([...at, name, ...splitPointer(e.instancePath), ...extra], e.keyword === 'additionalProperties' ? `unknown option "${extra[0]}"` : (e.message ?? 'invalid option'))
      }
      before.add(name)
      continue
    }
    for (const required of plugin.requires?.(options, settings) ?? []) {
      if (!before.has(required)) report([...at, name], `policy "${name}" must come after "${required}" in the chain`)
    }
    for (const problem of plugin.check?.(options, settings, placeOf(at)) ?? []) {
      report([...at, name, ...splitPointer(problem.path)], problem.message)
    }
    before.add(name)
    for (const stoodFor of plugin.provides ?? []) before.add(stoodFor)
  }
  return before
}

/** The service (and route) a chain entry at YAML path `at` belongs to: `services.<service>[.routes.<route>]…`. */
function placeOf (at: readonly (string | number)[]): PolicyPlace | undefined {
  if (at[0] !== 'services' || typeof at[1] !== 'string') return undefined
  return { service: at[1], routeId: at[2] === 'routes' && typeof at[3] === 'string' ? at[3] : undefined }
}

function splitPointer (path: string): (string | number)[] {
  return path.split('/').filter((s) => s !== '').map((s) => /^\d+$/.test(s) ? Number(s) : s)
}

function splitDotted (path: string): (string | number)[] {
  return path.split('.').filter((s) => s !== '').map((s) => /^\d+$/.test(s) ? Number(s) : s)
}
