import type { FastifyReply, FastifyRequest } from 'fastify'
import { PassThrough } from 'node:stream'
import { GatewayError } from '../../errors/gateway-error.js'
import type { RouteDefinition, ServiceModule } from '../service-module.js'
import { LaneAgents } from './lane-agents.js'
import { laneRequestHeaders, relayedResponseHeaders } from './lane-headers.js'
import { canonicalLanePath, laneTarget, splitLiveUrl } from './lane-path.js'
import { LaneRelay, type RelayResponse } from './lane-relay.js'
import { resolveLaneStore } from './lane-store.js'
import { liveSettings, liveSettingsSchema } from './settings.js'
import { readUpstreamBody } from './upstream-body.js'

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
  routeIds: ['read', 'write'],
  settingsSchema: liveSettingsSchema,
  build () {
    const agents = new LaneAgents()
    const relay = new LaneRelay()
    const handler = liveHandler(agents, relay)
    const routes: RouteDefinition[] = [
      {
        id: 'read',
        method: 'GET',
        url: '/:store_org_id/live/*',
        description: 'Relays GET (and HEAD) to the store\'s lane. Scope: exchange:live.read.',
        rawBody: true,
        handler,
      },
      {
        id: 'write',
        method: ['POST', 'PUT', 'PATCH', 'DELETE'],
        url: '/:store_org_id/live/*',
        description: 'Relays POST, PUT, PATCH and DELETE to the store\'s lane. Scope: exchange:live.write.',
        rawBody: true,
        handler,
      },
    ]
    return {
      routes,
      close: async function closeLive () {
        relay.close()
        agents.close()
      },
    }
  },
}

function liveHandler (agents: LaneAgents, relay: LaneRelay) {
  return async function relayToLane (request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    const storeId = (request.params as { store_org_id: string }).store_org_id
    if (!STORE_ID.test(storeId)) throw new GatewayError('store_not_found', { fields: { store_org_id: storeId } })
    const store = resolveLaneStore(request, storeId)
    const settings = liveSettings(request.gw.snapshot.config)

    const { remainder, query } = splitLiveUrl(request.raw.url ?? '', storeId)
    const target = laneTarget(store.lane.base_url, canonicalLanePath(remainder), query)

    const declared = Number(request.headers['content-length'] ?? 0)
    if (declared > settings.max_body_bytes) throw new GatewayError('payload_too_large')

    const headers = laneRequestHeaders(request.headers, {
      laneHost: target.host,
      clientIp: request.ip,
      requestId: String(request.id),
      credential: store.lane.credential,
    })
    const answer = await relay.relay({
      req: request.raw,
      res: reply.raw,
      lane: store.lane,
      agent: agents.get(store.id, store.lane),
      target,
      headers,
      maxBodyBytes: settings.max_body_bytes,
    })
    const status = answer.response.statusCode ?? 0
    if (status < 200 || status > 599) {
      answer.response.destroy()
      throw new GatewayError('upstream_error', {
        message: 'The lane software answered with an invalid status.',
        fields: { upstream_status: 0, upstream_body: '' },
      })
    }
    if (status >= 400) {
      const body = await readUpstreamBody(answer.response, settings.max_upstream_error_body_bytes)
      throw new GatewayError('upstream_error', {
        message: `The lane software answered ${status}.`,
        fields: { upstream_status: status, upstream_body: body },
      }).withStatus(status)
    }
    return relayResponse(answer, status, reply)
  }
}

/**
 * Streams a lane's 1xx-3xx answer to the caller. If the lane breaks off before the first body byte went out,
 * the caller gets a 502 upstream_error instead; after that, the caller's connection is destroyed, so a cut
 * response never looks complete (F7). If the caller goes away, the lane request is aborted (F8).
 */
function relayResponse (answer: RelayResponse, status: number, reply: FastifyReply): FastifyReply {
  const { response, upstream } = answer
  const headers = relayedResponseHeaders(response.headers)
  reply.code(status)
  for (const [name, value] of Object.entries(headers)) reply.header(name, value)

  const body = new PassThrough()
  const brokeOff = (): void => {
    if (response.complete) return
    if (!reply.raw.headersSent) {
      for (const name of Object.keys(headers)) reply.removeHeader(name)
      body.destroy(new GatewayError('upstream_error', {
        message: 'The lane software closed the connection while answering.',
        fields: { upstream_status: 0, upstream_body: '' },
      }))
    } else {
      body.destroy(new Error('lane response cut off'))
    }
  }
  response.on('error', brokeOff)
  response.on('close', brokeOff)
  body.on('close', function abortLane () {
    if (!response.complete) {
      response.destroy()
      upstream?.destroy()
    }
  })
  response.pipe(body)
  return reply.send(body)
}

export default liveService
