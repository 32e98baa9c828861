import type { FastifyRequest } from 'fastify'
import type { LaneConfig } from '../../config/types.js'
import type { ResolvedStore, StoreAccess } from '../../config/indexes.js'
import { GatewayError } from '../../plugin/gateway-error.js'
import { storeAccessOf } from '../../runtime/store-access.js'

/** A store that may be relayed to: installed, with a lane. */
export interface LaneStore extends StoreAccess {
  readonly store: ResolvedStore
  readonly lane: LaneConfig
}

/**
 * The store a live request names and the lane serving it, as the store-access rule answered (the organization
 * policy's answer on the request; the rule itself when the chain has no such step): a store that is unknown,
 * outside the caller's tree, not installed or without a lane answers 404 store_not_found, with the same body in
 * every case. Without a principal (a chain missing `auth`) nothing is relayed.
 */
export function resolveLaneStore (request: FastifyRequest, storeId: string): LaneStore {
  if (request.gw.principal === undefined) throw new GatewayError('unauthenticated')
  const access = storeAccessOf(request.gw, storeId)
  if (access?.store === undefined || access.lane === undefined) {
    throw new GatewayError('store_not_found', { fields: { store_org_id: storeId } })
  }
  return access as LaneStore
}
