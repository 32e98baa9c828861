import type { ConfigIndexes, ResolvedConnectedAccount } from '../../config/indexes.js'
import { GatewayError } from '../../plugin/gateway-error.js'
import type { Principal } from '../../runtime/request-context.js'

/**
 * Object-level authorization of the organizations and connected accounts a payments request names. The rule:
 * the account's owner (an organization or a store organization) must be in the caller's organization tree.
 * An organization_id outside the tree answers 403 whether or not it exists (no probing for organizations); a
 * connected_account_id outside the tree answers exactly like an unknown one, 404 `connected_account_not_found`
 * (RELIABILITY E1: no probing for which account ids exist).
 */
export function accountForOrganization (indexes: ConfigIndexes, principal: Principal, organizationId: string): ResolvedConnectedAccount {
  if (!indexes.reachable(principal.organizationId).has(organizationId)) {
    throw new GatewayError('forbidden', { message: 'This organization is outside your organization\'s access.' })
  }
  const account = indexes.organizations.get(organizationId)?.connected_account ?? indexes.stores.get(organizationId)?.connectedAccount
  if (account === undefined) {
    throw new GatewayError('connected_account_not_found', { message: `Organization ${organizationId} has no connected account.` })
  }
  return { ...account, ownerId: organizationId }
}

export function connectedAccount (indexes: ConfigIndexes, principal: Principal, connectedAccountId: string): ResolvedConnectedAccount {
  const account = indexes.connectedAccounts.get(connectedAccountId)
  if (account === undefined || !indexes.reachable(principal.organizationId).has(account.ownerId)) {
    throw new GatewayError('connected_account_not_found')
  }
  return account
}
