import type {
  ConnectedAccountConfig, GatewayConfig, LaneConfig, OrganizationConfig, ServiceAccountConfig,
} from './types.js'

/** A store as the gateway resolves it: its own settings plus the organization that owns it. */
export interface ResolvedStore {
  id: string
  name: string
  ownerId: string
  installActive: boolean
  lane?: LaneConfig
  connectedAccount?: ConnectedAccountConfig
}

/** A connected account and the organization (or store) it belongs to. */
export interface ResolvedConnectedAccount extends ConnectedAccountConfig {
  ownerId: string
}

/**
 * Lookup tables derived once from a validated config. Everything a request needs about organizations, stores
 * and accounts is one map lookup away.
 */
export interface ConfigIndexes {
  organizations: ReadonlyMap<string, OrganizationConfig>
  stores: ReadonlyMap<string, ResolvedStore>
  accounts: ReadonlyMap<string, ServiceAccountConfig>
  connectedAccounts: ReadonlyMap<string, ResolvedConnectedAccount>
  /** Organization or store id → every id the caller of that organization may reach (itself included). */
  reachable (organizationId: string): ReadonlySet<string>
}

const empty: ReadonlySet<string> = new Set()

export function buildIndexes (config: GatewayConfig): ConfigIndexes {
  const organizations = new Map(config.organizations.map((o) => [o.id, o]))
  const stores = new Map<string, ResolvedStore>()
  const connectedAccounts = new Map<string, ResolvedConnectedAccount>()
  const children = new Map<string, string[]>()
  for (const org of config.organizations) {
    if (org.parent !== undefined) children.set(org.parent, [...(children.get(org.parent) ?? []), org.id])
    if (org.connected_account) connectedAccounts.set(org.connected_account.id, { ...org.connected_account, ownerId: org.id })
    for (const store of org.stores) {
      stores.set(store.id, {
        id: store.id,
        name: store.name,
        ownerId: org.id,
        installActive: store.install_active,
        lane: store.lane,
        connectedAccount: store.connected_account,
      })
      if (store.connected_account) connectedAccounts.set(store.connected_account.id, { ...store.connected_account, ownerId: store.id })
    }
  }

  // Precompute each organization's reachable set: itself, its stores, and its descendants' (cycles are rejected
  // by validation, the `seen` set only keeps this total).
  const reachableById = new Map<string, ReadonlySet<string>>()
  for (const org of config.organizations) {
    const reach = new Set<string>()
    const queue = [org.id]
    while (queue.length > 0) {
      const id = queue.pop() as string
      if (reach.has(id)) continue
      reach.add(id)
      for (const store of organizations.get(id)?.stores ?? []) reach.add(store.id)
      queue.push(...(children.get(id) ?? []))
    }
    reachableById.set(org.id, reach)
  }
  for (const store of stores.values()) reachableById.set(store.id, new Set([store.id]))

  return {
    organizations,
    stores,
    accounts: new Map(config.service_accounts.map((a) => [a.client_id, a])),
    connectedAccounts,
    reachable: (organizationId) => reachableById.get(organizationId) ?? empty,
  }
}
