import type { FastifyRequest } from 'fastify'
import type { LaneConfig } from '../../config/types.js'
import type { ResolvedStore } from '../../config/indexes.js'
import { GatewayError } from '../../errors/gateway-error.js'

/** A store that may be relayed to: installed, with a lane. */
export interface LaneStore extends ResolvedStore {
  lane: LaneConfig
}

/**
 * Resolves the store a live request names, again (the organization policy already did, before the handler):
 * a store that is unknown, outside the caller's tree, not installed or without a lane answers 404
 * store_not_found, with the same body in every case. Without a principal (a chain missing `auth`) nothing is
 * relayed.
 */
export function resolveLaneStore (request: FastifyRequest, storeId: string): LaneStore {
  const { principal, snapshot } = request.gw
  if (principal === undefined) throw new GatewayError('unauthenticated')
  const store = snapshot.indexes.stores.get(storeId)
  const reachable = snapshot.indexes.reachable(principal.organizationId).has(storeId)
  if (store === undefined || !reachable || !store.installActive || store.lane === undefined) {
    throw new GatewayError('store_not_found', { fields: { store_org_id: storeId } })
  }
  return store as LaneStore
}
