import type { FastifyRequest } from 'fastify'
import { reachOf } from '../config/gateway-settings.js'
import type { ConfigIndexes } from '../config/indexes.js'
import type { StoreReach } from '../plugin/gateway-settings.js'
// Where the gateway declares `request.gw.reached`.
import type {} from '../runtime/request-context.js'

/** A route's `context.reachStore`: the store-access rule; an answer that lets the caller through is kept on the request. */
export function storeReacher (indexes: ConfigIndexes): (request: FastifyRequest, organizationId: string, id: string, needs: Exclude<StoreReach, 'outside'>) => boolean {
  return function reachStore (request: FastifyRequest, organizationId: string, id: string, needs: Exclude<StoreReach, 'outside'>): boolean {
    const access = indexes.access(organizationId, id)
    const reach = reachOf(access)
    if (reach === 'outside' || (needs === 'served' && reach !== 'served')) return false
    request.gw.reached = access
    return true
  }
}
