import type { FastifyRequest } from 'fastify'
import { GatewayError } from '../../errors/gateway-error.js'

/**
 * The stores a data-exchange query covers. Without a list: every installed store in the caller's tree, sorted.
 * With one: each must be a store in the caller's tree with an active install, else 404 store_not_found naming
 * the first that is not (unknown and foreign stores get the same answer). Duplicates are dropped.
 */
export function callerStores (request: FastifyRequest, requested: readonly string[] | undefined): string[] {
  const { principal, snapshot } = request.gw
  if (principal === undefined) throw new GatewayError('unauthenticated')
  const reachable = snapshot.indexes.reachable(principal.organizationId)
  if (requested === undefined) {
    return [...reachable].filter((id) => snapshot.indexes.stores.get(id)?.installActive === true).sort()
  }
  for (const id of requested) {
    const store = snapshot.indexes.stores.get(id)
    if (store === undefined || !reachable.has(id) || !store.installActive) {
      throw new GatewayError('store_not_found', { fields: { store_org_id: id } })
    }
  }
  return [...new Set(requested)]
}
