import { buildIndexes } from '../config/indexes.js'
import { policyName } from '../config/semantic-checks.js'
import { routePolicies, type GatewayConfig, type ServiceConfig } from '../config/types.js'
import type { SharedResources } from '../runtime/shared-resources.js'
import { chainKey, type Snapshot, type UpgradeLimits } from '../runtime/snapshot.js'
import { routeWebSocketLimits } from '../services/service-module.js'
import type { GatewaySettings } from '../plugin/gateway-settings.js'
import type { PolicyStep } from '../plugin/step.js'
import { policyContext } from '../plugin/context.js'
import { addHeadHook } from '../plugin/response-phase.js'
import { writeInvalidationStep } from '../../plugins/cache/invalidation.js'
import { policyViews } from './policy-views.js'
import type { Catalog } from './registry.js'

/**
 * Builds every route's policy chain for a validated config. Policy factories run here, once per route per
 * snapshot, never per request. A factory that throws makes the whole snapshot fail (a reload then keeps the
 * running one).
 */
export function buildSnapshot (config: GatewayConfig, version: number, catalog: Catalog, shared: SharedResources): Snapshot {
  const indexes = buildIndexes(config)
  const chains = new Map<string, readonly PolicyStep[]>()
  const preflights = new Map<string, readonly PolicyStep[]>()
  const views = policyViews(shared, config, indexes)
  const rechecks = new Map<string, readonly PolicyStep[]>()
  const upgrades = new Map<string, UpgradeLimits>()
  const cacheRoutes = new Map<string, Set<string>>()
  const stepPolicies = new Map<PolicyStep, string>()
  for (const [service, settings] of Object.entries(config.services)) {
    for (const [routeId, routeEntry] of Object.entries(settings.routes)) {
      const preflight: PolicyStep[] = []
      const recheck: PolicyStep[] = []
      const limits = routeWebSocketLimits(catalog.services, service, settings, routeId)
      const websocket = limits !== undefined
      const steps = [...settings.policies, ...routePolicies(routeEntry)].map((entry) => {
        const name = policyName(entry)
        // `cache` is last in its chain (config-rules.ts) and marks every answer it looked up with X-Cache.
        if (name === 'cache') cacheRoutes.set(service, (cacheRoutes.get(service) ?? new Set()).add(routeId))
        const plugin = catalog.plugins.get(name)
        if (plugin === undefined) throw new Error(`unknown policy "${name}"`)
        const step = plugin.create(entry[name] ?? {}, policyContext(plugin, { ...views, service, routeId, envelope: settings.envelope, websocket, serviceBodyLimit: serviceBodyLimit(settings) }))
        stepPolicies.set(step, name)
        if (plugin.answersPreflight === true) preflight.push(step)
        if (plugin.recheck === true) recheck.push(step)
        return step
      })
      chains.set(chainKey(service, routeId), steps)
      if (preflight.length > 0) preflights.set(chainKey(service, routeId), preflight)
      if (limits !== undefined) {
        upgrades.set(chainKey(service, routeId), limits)
        rechecks.set(chainKey(service, routeId), recheck)
      }
    }
  }
  if (cacheRoutes.size > 0) appendWriteInvalidation(chains, cacheRoutes, config, views.settings)
  return { version, config, indexes, chains, preflights, rechecks, upgrades, stepPolicies, ...(cacheRoutes.size > 0 ? { cacheRoutes } : {}) }
}

/**
 * A cache must drop what it holds for a URL written through any route (RFC 9111 §4.4), not only through a route
 * that caches: every other chain ends in the cache's invalidation step (a cached route's own `cache` step does it).
 */
function appendWriteInvalidation (chains: Map<string, readonly PolicyStep[]>, cacheRoutes: Map<string, Set<string>>, config: GatewayConfig, settings: GatewaySettings): void {
  const step = writeInvalidationStep(settings, addHeadHook)
  for (const [service, settings] of Object.entries(config.services)) {
    for (const routeId of Object.keys(settings.routes)) {
      if (cacheRoutes.get(service)?.has(routeId) === true) continue
      const key = chainKey(service, routeId)
      chains.set(key, [...(chains.get(key) ?? []), step])
    }
  }
}

/** A relaying service's own body limit (`max_body_bytes` of a proxy block or of the live service), if it sets one. */
function serviceBodyLimit (settings: ServiceConfig): number | undefined {
  const limit = 'max_body_bytes' in settings ? settings.max_body_bytes : undefined
  return typeof limit === 'number' ? limit : undefined
}
