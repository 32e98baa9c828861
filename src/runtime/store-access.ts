import type { StoreAccess } from '../config/indexes.js'
import type { RequestContext } from './request-context.js'

/**
 * The store-access answer for `id` on one request: the one the `organization` policy recorded when it checked the
 * same id (no second lookup), else the rule asked now for the caller (a chain without `organization`, or a service
 * naming several stores, still never reaches outside the caller's tree). Undefined without a principal, or when `id`
 * is outside the caller's tree or unknown.
 */
export function storeAccessOf (gw: RequestContext, id: string): StoreAccess | undefined {
  const reached = gw.reached
  if (reached !== undefined && reached.id === id) return reached
  const principal = gw.principal
  return principal === undefined ? undefined : gw.snapshot.indexes.access(principal.organizationId, id)
}
