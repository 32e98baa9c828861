import { isDeepStrictEqual } from 'node:util'
import type { RestartRequiredChange } from '../config/restart-required.js'
import type { GatewayConfig, ServiceConfig } from '../config/types.js'
import { declaredRoutes, moduleForService, type ServiceModule } from './service-module.js'

/**
 * Which service-block changes of a reload need a restart. Every service's routes are registered once, at start,
 * from the boot config (`mounted`); the snapshot only decides what those routes do. So:
 * - a **removed** block needs none: its routes answer 404 at once (the snapshot has no chain for them);
 * - an **added** block the gateway did not start with is not served (its paths answer 404) until a restart;
 * - a changed `prefix`, service `type` or route list (ids, methods, paths of a service whose routes come from its
 *   settings) keeps the routes started with until a restart (the chains of the routes kept change at once).
 * A change is reported when this reload made it and it differs from what is mounted: a block removed and added back
 * as the gateway started with it, or a prefix changed back, is served as it was, and needs no restart.
 */
export function serviceRestartChanges (modules: readonly ServiceModule[], mounted: GatewayConfig, before: GatewayConfig, after: GatewayConfig): RestartRequiredChange[] {
  const changes: RestartRequiredChange[] = []
  for (const [service, block] of Object.entries(after.services)) {
    const started = mounted.services[service]
    const previous = before.services[service]
    if (started === undefined) {
      if (previous === undefined) {
        changes.push({
          key: `services.${service}`,
          message: 'a service block the gateway did not start with: routes are mounted at start only, so its paths answer 404 until a restart',
        })
      }
      continue
    }
    const aspects: ReadonlyArray<[string, (settings: ServiceConfig | undefined) => unknown, string]> = [
      ['prefix', (s) => s?.prefix, `routes are mounted at start only: they stay under ${started.prefix} until a restart`],
      ['type', (s) => s === undefined ? undefined : moduleForService(modules, service, s), 'routes are mounted at start only: the service started with stays until a restart'],
      ['routes', (s) => routeShape(modules, service, s), 'routes are mounted at start only: the route list started with (ids, methods, paths) stays until a restart; the chains of the routes kept change at once'],
    ]
    for (const [aspect, read, message] of aspects) {
      const now = read(block)
      // The type is reported alone: a different service's routes differ anyway.
      if (aspect === 'routes' && changes.some((c) => c.key === `services.${service}.type`)) continue
      if (!same(now, read(previous)) && !same(now, read(started))) changes.push({ key: `services.${service}.${aspect}`, message })
    }
  }
  return changes
}

function same (a: unknown, b: unknown): boolean {
  return a === b || isDeepStrictEqual(a, b)
}

/** The routes a block mounts: [id, methods, path] of each, or `undefined` without a block or a module. */
function routeShape (modules: readonly ServiceModule[], service: string, settings: ServiceConfig | undefined): unknown {
  if (settings === undefined) return undefined
  const module = moduleForService(modules, service, settings)
  if (module === undefined) return undefined
  return declaredRoutes(module, settings).map((r) => [r.id, [r.method].flat(), r.url])
}
