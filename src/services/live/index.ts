import type { FastifyReply, FastifyRequest } from 'fastify'
import { GatewayError } from '../../plugin/gateway-error.js'
import type { RouteDeclaration, ServiceModule } from '../service-module.js'
import type { UpstreamRegistry } from '../../upstream/registry.js'
import type { LaneConfig } from '../../config/types.js'
import { livePathBelowBase, splitLiveUrl } from './lane-path.js'
import { resolveLaneStore, type LaneStore } from './lane-store.js'
import type { Upstream } from '../../upstream/upstream.js'
import type { SplitSettings } from '../../upstream/split.js'
import { relayCallerRequest } from '../relay-reply.js'
import { relayWebSocket, upgradeLimits } from '../websocket-relay.js'
import { withoutAccessToken } from '../access-token-query.js'
import { LiveSettingsSchema, liveSettings, liveSettingsSchema } from './settings.js'
import { blockSettings } from '../service-settings.js'
import { websocketLimits } from '../websocket-settings.js'
import { circuitBreakerProblems } from '../circuit-breaker-settings.js'
import { splitProblems } from '../split-settings.js'
import { splitCaller } from '../split-caller.js'
import { LANE_GROUPS, laneVersion } from './lane-version.js'
import { recordGroupRequest } from '../../observability/recorders.js'

/** The routes (ids are the YAML keys under `services.live.routes`). */
export const liveRoutes: readonly RouteDeclaration[] = [
  {
    id: 'read',
    method: 'GET',
    url: '/:store_org_id/live/*',
    description: 'Relays GET (and HEAD) to the store\'s lane. Scope: exchange:live.read.',
    scopes: ['exchange:live.read'],
    rawBody: true,
    errors: ['bad_request', 'store_not_found', 'payload_too_large', 'upstream_error'],
  },
  {
    id: 'write',
    method: ['POST', 'PUT', 'PATCH', 'DELETE'],
    url: '/:store_org_id/live/*',
    description: 'Relays POST, PUT, PATCH and DELETE to the store\'s lane. Scope: exchange:live.write.',
    scopes: ['exchange:live.write'],
    rawBody: true,
    errors: ['bad_request', 'store_not_found', 'payload_too_large', 'upstream_error'],
  },
]

const STORE_ID = /^org_[A-Za-z0-9_-]{1,64}$/

/**
 * The lane live proxy: `<prefix>/:store_org_id/live/*` relays to the store's lane software, whose address comes
 * only from the config's lane registry. Reads (GET, HEAD) and writes (POST, PUT, PATCH, DELETE) are separate
 * routes so gateway.yaml gives them separate scopes (`exchange:live.read`, `exchange:live.write`). See
 * docs/data-exchange.md for what is forwarded, stripped and answered.
 */
export const liveService: ServiceModule = {
  name: 'live',
  description: 'Lane live proxy: relays reads and writes to a store\'s lane software.',
  routes: liveRoutes,
  settingsSchema: liveSettingsSchema,
  check (settings) {
    const live = blockSettings(settings, LiveSettingsSchema)
    const split = live.split === undefined ? [] : splitProblems(live.split, LANE_GROUPS, 'split')
    return [...circuitBreakerProblems(live.circuit_breaker, 'circuit_breaker'), ...split]
  },
  build (deps) {
    // The lanes' pools are shared with fan-out's lane calls (one socket cap per lane) and closed with the gateway.
    const handler = liveHandler(deps.shared.upstreams.lanes)
    return { handlers: { read: handler, write: handler } }
  },
  // Only reads may be upgraded: a WebSocket starts as a GET.
  websocketRoute: (settings, routeId) => routeId === 'read' ? websocketLimits(blockSettings(settings, LiveSettingsSchema).websocket, undefined) : undefined,
}

function liveHandler (lanes: UpstreamRegistry<LaneConfig>) {
  return function relayLive (request: FastifyRequest, reply: FastifyReply): Promise<unknown> | undefined {
    const storeId = (request.params as { store_org_id: string }).store_org_id
    if (!STORE_ID.test(storeId)) throw new GatewayError('store_not_found', { fields: { store_org_id: storeId } })
    const store = resolveLaneStore(request, storeId)
    const settings = liveSettings(request.gw.snapshot.config)

    const { remainder, query } = splitLiveUrl(request.raw.url ?? '', storeId)
    const websocket = upgradeLimits(request)
    // On the read route with `websocket:` the token may come as `access_token`: it never reaches the lane.
    const upgradable = request.gw.routeId === 'read' && settings.websocket !== undefined && settings.websocket !== false
    const path = livePathBelowBase(request.raw.url ?? '', remainder, query, upgradable ? withoutAccessToken(query) : query)

    // Counted in lanegate_upstream_* by the lanes registry's key: the store id, `<store>/next` for its lane.next.
    const lane = store.lane.next === undefined || settings.split === undefined ? lanes.get(store.id, store.lane) : splitLane(request, store, settings.split, lanes)
    if (websocket !== undefined) return relayWebSocket(request, reply, lane, path, websocket, settings.max_upstream_error_body_bytes)
    return relayCallerRequest(request, reply, lane, path, settings)
  }
}

/** The store's lane, or its `lane.next` when the live split sends this request there. */
function splitLane (request: FastifyRequest, store: LaneStore, split: SplitSettings, lanes: UpstreamRegistry<LaneConfig>): Upstream {
  const version = laneVersion(store.id, store.lane, split, splitCaller(request, store.id))
  recordGroupRequest('live', version.group)
  return lanes.get(version.key, version.lane)
}

export default liveService
