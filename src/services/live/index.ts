import type { FastifyReply, FastifyRequest } from 'fastify'
import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http'
import { GatewayError } from '../../errors/gateway-error.js'
import type { RouteDefinition, ServiceModule } from '../service-module.js'
import { LaneAgents } from './lane-agents.js'
import { laneRequestHeaders, relayedResponseHeaders } from './lane-headers.js'
import { canonicalLanePath, laneTarget, splitLiveUrl } from './lane-path.js'
import { requestLane, type RelayResponse } from './lane-request.js'
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
    const handler = liveHandler(agents)
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
        agents.close()
      },
    }
  },
}

function liveHandler (agents: LaneAgents) {
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
    const answer = await requestLane({
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
    const response = answer.response
    // Nothing goes to the caller before the first body byte (or the end): a lane that breaks off before that
    // is still answered with a proper 502 by the error handler.
    const first = await firstChunk(response)
    relayResponse(request, reply, answer, status, first)
    return reply
  }
}

/** What the lane sent first: a body chunk, or `null` for an empty body; rejects if the lane broke off first. */
function firstChunk (response: IncomingMessage): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      response.pause()
      done()
      resolve(chunk)
    }
    const onEnd = (): void => {
      done()
      resolve(null)
    }
    const onBreak = (): void => {
      done()
      response.destroy()
      reject(new GatewayError('upstream_error', {
        message: 'The lane software closed the connection while answering.',
        fields: { upstream_status: 0, upstream_body: '' },
      }))
    }
    const done = (): void => {
      response.off('data', onData)
      response.off('end', onEnd)
      response.off('error', onBreak)
      response.off('close', onBreak)
    }
    response.on('data', onData)
    response.on('end', onEnd)
    response.on('error', onBreak)
    response.on('close', onBreak)
  })
}

/**
 * Streams a lane's 1xx-3xx answer to the caller on the raw response (`reply.hijack()`: no serializer, no onSend
 * hook, so the gateway's standard headers are written here: the policy chain's headers (rate limits), the
 * lane's filtered headers, `x-request-id`, and `cache-control: no-store` unless the lane sent its own). If the
 * lane breaks off mid-body, the caller's connection is destroyed, so a cut response never looks complete (F7).
 * If the caller goes away, the lane request is aborted (F8).
 */
function relayResponse (request: FastifyRequest, reply: FastifyReply, answer: RelayResponse, status: number,
  first: Buffer | null): void {
  const { response, upstream } = answer
  const headers: OutgoingHttpHeaders = {}
  const own = reply.getHeaders()
  for (const name in own) if (own[name] !== undefined) headers[name] = own[name]
  Object.assign(headers, relayedResponseHeaders(response.headers))
  headers['x-request-id'] = String(request.id)
  if (headers['cache-control'] === undefined) headers['cache-control'] = 'no-store'

  reply.hijack()
  const res = reply.raw
  const abortLane = (): void => {
    if (response.complete) return
    response.destroy()
    upstream?.destroy()
  }
  if (res.destroyed) {
    abortLane()
    return
  }
  res.writeHead(status, headers)
  if (first === null) {
    res.end()
    return
  }
  const brokeOff = (): void => {
    if (!response.complete) res.destroy()
  }
  response.on('error', brokeOff)
  response.on('close', brokeOff)
  res.on('close', abortLane)
  res.write(first)
  response.pipe(res)
}

export default liveService
