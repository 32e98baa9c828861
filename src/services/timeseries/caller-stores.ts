import type { FastifyRequest } from 'fastify'
import { GatewayError } from '../../plugin/gateway-error.js'
import { storeAccessOf } from '../../runtime/store-access.js'

/**
 * The stores a data-exchange query covers, by the store-access rule (ConfigIndexes.access). Without a list: every
 * installed store in the caller's tree, sorted. With one: each must be a store in the caller's tree with an active
 * install, else 404 store_not_found naming the first that is not (unknown and foreign stores get the same answer).
 * Duplicates are dropped.
 */
export function callerStores (request: FastifyRequest, requested: readonly string[] | undefined): string[] {
  const { principal, snapshot } = request.gw
  if (principal === undefined) throw new GatewayError('unauthenticated')
  const installed = (id: string): boolean => storeAccessOf(request.gw, id)?.store?.installActive === true
  if (requested === undefined) {
    return [...snapshot.indexes.reachable(principal.organizationId)].filter(installed).sort()
  }
  for (const id of requested) {
    if (!installed(id)) throw new GatewayError('store_not_found', { fields: { store_org_id: id } })
  }
  return [...new Set(requested)]
}
