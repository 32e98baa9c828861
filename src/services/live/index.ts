import type { FastifyReply, FastifyRequest } from 'fastify'
import type { OutgoingHttpHeaders } from 'node:http'
import { GatewayError } from '../../errors/gateway-error.js'
import type { RouteDeclaration, ServiceModule } from '../service-module.js'
import { laneRequestHeaders, relayedResponseHeaders } from './lane-headers.js'
import { canonicalLanePath, laneHost, lanePath, splitLiveUrl } from './lane-path.js'
import { LanePools } from './lane-pools.js'
import { relayToLane } from './lane-relay.js'
import { resolveLaneStore } from './lane-store.js'
import { liveSettings, liveSettingsSchema } from './settings.js'

/** The routes (ids are the YAML keys under `services.live.routes`). */
export const liveRoutes: readonly RouteDeclaration[] = [
  {
    id: 'read',
    method: 'GET',
    url: '/:store_org_id/live/*',
    description: 'Relays GET (and HEAD) to the store\'s lane. Scope: exchange:live.read.',
    scopes: ['exchange:live.read'],
    rawBody: true,
    errors: ['payload_too_large', 'upstream_error', 'upstream_timeout'],
  },
  {
    id: 'write',
    method: ['POST', 'PUT', 'PATCH', 'DELETE'],
    url: '/:store_org_id/live/*',
    description: 'Relays POST, PUT, PATCH and DELETE to the store\'s lane. Scope: exchange:live.write.',
    scopes: ['exchange:live.write'],
    rawBody: true,
    errors: ['payload_too_large', 'upstream_error', 'upstream_timeout'],
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
  build () {
    const pools = new LanePools()
    const handler = liveHandler(pools)
    return {
      handlers: { read: handler, write: handler },
      close: async function closeLive () {
        await pools.close()
      },
    }
  },
}

function liveHandler (pools: LanePools) {
  return async function relayLive (request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    const storeId = (request.params as { store_org_id: string }).store_org_id
    if (!STORE_ID.test(storeId)) throw new GatewayError('store_not_found', { fields: { store_org_id: storeId } })
    const store = resolveLaneStore(request, storeId)
    const settings = liveSettings(request.gw.snapshot.config)

    const { remainder, query } = splitLiveUrl(request.raw.url ?? '', storeId)
    const path = lanePath(store.lane.base_url, canonicalLanePath(remainder), query)

    const declared = Number(request.headers['content-length'] ?? 0)
    if (declared > settings.max_body_bytes) throw new GatewayError('payload_too_large')

    await relayToLane({
      req: request.raw,
      res: reply.raw,
      lane: store.lane,
      pool: pools.get(store.id, store.lane),
      path,
      headers: laneRequestHeaders(request.headers, {
        laneHost: laneHost(store.lane.base_url),
        clientIp: request.ip,
        requestId: String(request.id),
        credential: store.lane.credential,
      }),
      maxBodyBytes: settings.max_body_bytes,
      maxErrorBodyBytes: settings.max_upstream_error_body_bytes,
      takeOver: function takeOverReply (laneHeaders) {
        return callerHeaders(request, reply, laneHeaders)
      },
    })
    return reply
  }
}

/**
 * The caller's headers for a relayed 1xx-3xx answer, taken over from fastify (`reply.hijack()`: no serializer,
 * no onSend hook): what the chain set (rate limits, `x-request-id`, `cache-control: no-store`), overridden by the
 * lane's filtered headers (its own cache-control included), and the request id again. `undefined` when the
 * caller is already gone.
 */
function callerHeaders (request: FastifyRequest, reply: FastifyReply, laneHeaders: Record<string, string | string[] | undefined>): OutgoingHttpHeaders | undefined {
  // getHeaders() is a fresh object (fastify copies its own and the raw response's), so it is filled in place.
  const headers = reply.getHeaders() as OutgoingHttpHeaders
  for (const name in headers) if (headers[name] === undefined) delete headers[name]
  Object.assign(headers, relayedResponseHeaders(laneHeaders))
  headers['x-request-id'] = String(request.id)
  reply.hijack()
  return reply.raw.destroyed ? undefined : headers
}

export default liveService
