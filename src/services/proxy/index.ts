import type { FastifyReply, FastifyRequest } from 'fastify'
import type { ServiceConfig } from '../../config/types.js'
import { GatewayError } from '../../plugin/gateway-error.js'
import type { UpstreamRegistry } from '../../upstream/registry.js'
import type { UpstreamSettings } from '../../upstream/settings.js'
import { relayCallerRequest } from '../relay-reply.js'
import { relayWebSocket, upgradeLimits } from '../websocket-relay.js'
import { urlWithoutAccessToken } from '../access-token-query.js'
import { chainKey } from '../../runtime/snapshot.js'
import type { RouteDeclaration, RouteHandler, ServiceModule, ServiceResources } from '../service-module.js'
import { checkProxySettings } from './check.js'
import { proxiedPath } from './proxy-path.js'
import { ProxyRouteEntrySchema, proxySettings, proxySettingsSchema } from './settings.js'
import { blockRoutes } from '../service-settings.js'
import { proxyUpstreamSettings } from './upstream-settings.js'
import { groupKey, proxyGroups, routePlan } from './groups.js'
import { chooseGroup } from '../../upstream/split.js'
import { mirrorRequest } from './mirror.js'
import { splitCaller } from '../split-caller.js'
import { recordGroupRequest } from '../../observability/recorders.js'
import { websocketLimits } from '../websocket-settings.js'

/**
 * The `proxy` service type: any HTTP backend behind the gateway, configured only in gateway.yaml. A block
 * `services.<any name>: { type: proxy, prefix, envelope, upstream, policies, routes }` serves exactly the routes
 * it lists (method and path below the prefix, each with its own chain; anything else under the prefix is 404 in
 * the block's envelope) and relays them through the upstream engine (src/upstream: balancing, health, retry,
 * header hygiene, failures as `upstream_error`). Several blocks may coexist. See docs/proxy.md.
 */
export const proxyService: ServiceModule = {
  name: 'proxy',
  typed: true,
  description: 'A legacy HTTP service behind the gateway: the listed routes are relayed to the upstream\'s targets.',
  routes: proxyRoutes,
  routeEntrySchema: ProxyRouteEntrySchema,
  settingsSchema: proxySettingsSchema,
  check: (settings) => checkProxySettings(settings),
  build (deps) {
    // The prefix the routes are mounted under (a changed prefix needs a restart, like every service's).
    const prefix = deps.currentConfig().services[deps.service]?.prefix
    if (prefix === undefined) throw new Error(`services.${deps.service} is not configured`)
    const handler = proxyHandler(deps.service, prefix, deps.shared.upstreams.proxies)
    return { handlers: () => handler }
  },
  reconcile: reconcileProxyUpstreams,
  websocketRoute (settings, routeId) {
    const entry = blockRoutes(settings, ProxyRouteEntrySchema)[routeId]
    return websocketLimits(entry?.websocket, proxySettings(settings).websocket)
  },
}

/**
 * Each snapshot declares the proxy blocks' upstreams, one per target group (boot and every reload): a block's upstream is built, and its
 * active health checks started, when the snapshot is, not at its first request; a changed block is reconciled in
 * place; a removed block's upstream stops probing, finishes its requests in flight and closes its pools; a block
 * added back gets a new one.
 */
function reconcileProxyUpstreams (blocks: ReadonlyMap<string, ServiceConfig>, shared: ServiceResources): void {
  const wanted = new Map<string, UpstreamSettings>()
  for (const [service, block] of blocks) {
    const settings = proxySettings(block)
    for (const [group, upstream] of proxyGroups(settings)) wanted.set(groupKey(service, settings, group), proxyUpstreamSettings(upstream))
  }
  shared.upstreams.proxies.reconcile(wanted)
}

/** What the handler itself may answer with (path safety, body limit, the engine's failures): for the OpenAPI document. */
const PROXY_ROUTE_ERRORS = ['bad_request', 'payload_too_large', 'upstream_error'] as const

/** The block's `routes:` as route declarations: each entry's methods on its path, body streamed (never parsed). */
function proxyRoutes (settings: ServiceConfig): RouteDeclaration[] {
  return Object.entries(blockRoutes(settings, ProxyRouteEntrySchema)).map(([id, { methods, path }]) => {
    return {
      id,
      method: [...methods],
      url: path,
      description: `Relays ${methods.join(', ')} ${path} to the upstream.`,
      rawBody: true,
      errors: PROXY_ROUTE_ERRORS,
    }
  })
}

/**
 * One handler for every route of a proxy block: the path is checked and canonicalised (proxy-path.ts), a declared
 * body over `max_body_bytes` is refused before any target is contacted, and the request relayed on the block's
 * upstream (a reload reconciles it in place: kept targets keep their pools, removed ones drain). A request whose
 * chain started on an older snapshot hands the registry its older settings; the registry keeps the newest the
 * snapshots declared (registry.ts), so it never turns the shared upstream back.
 */
function proxyHandler (service: string, prefix: string, upstreams: UpstreamRegistry<UpstreamSettings>): RouteHandler {
  return function relayProxy (request: FastifyRequest, reply: FastifyReply): Promise<unknown> | undefined {
    const block = request.gw.snapshot.config.services[service]
    if (block === undefined) throw new GatewayError('not_found')
    const settings = proxySettings(block)
    const websocket = upgradeLimits(request)
    const upgradable = request.gw.snapshot.upgrades?.has(chainKey(service, request.gw.routeId)) === true
    // On a route that may be upgraded the token may come as `access_token`: it never goes upstream.
    const rawUrl = upgradable ? urlWithoutAccessToken(request.raw.url ?? '') : request.raw.url ?? ''
    const plan = routePlan(service, settings, request.gw.routeId)
    if (plan === undefined) throw new GatewayError('not_found') // never for a validated block
    // The split's group (its own targets, breakers and budget, keyed `<block>/<group>`); without a split, the first.
    const group = plan.split === undefined ? plan.first : plan.groups.get(chooseGroup(plan.split, service, splitCaller(request), plan.first.name).group) ?? plan.first
    const upstream = upstreams.get(group.key, group.settings)
    const path = proxiedPath(rawUrl, prefix, group.config.strip_prefix)
    if (settings.upstreams !== undefined) recordGroupRequest(service, group.name)
    if (websocket !== undefined) return relayWebSocket(request, reply, upstream, path, websocket, settings.max_upstream_error_body_bytes)
    // In the same tick as the relay's pipe: a copy's body reader and the relay both see every chunk.
    const mirror = plan.mirror
    if (mirror !== undefined && mirror.upstream !== group.name) {
      const target = plan.groups.get(mirror.upstream)
      if (target !== undefined) mirrorRequest(request, service, mirror, settings.max_body_bytes, { upstreams, group: target, rawUrl, prefix })
    }
    return relayCallerRequest(request, reply, upstream, path, settings)
  }
}

export default proxyService
