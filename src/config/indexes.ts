import { activeLane } from './active-lane.js'
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
 * The store-access rule's answer for one organization or store id a caller may reach (docs/architecture.md,
 * "One rule per question"). Built once per id per config, so asking costs two map lookups and no allocation.
 */
export interface StoreAccess {
  /** The organization or store id asked about. */
  readonly id: string
  /** The store, when the id names one (undefined for an organization). */
  readonly store: ResolvedStore | undefined
  /** The lane that serves it: the store's lane while its install is active (config/active-lane.ts), else none. */
  readonly lane: LaneConfig | undefined
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
  /**
   * The one store-access rule: may the caller of `organizationId` reach the organization or store `id` (itself,
   * its stores, its descendants'), and which lane serves it. Undefined when `id` is outside that tree or unknown:
   * callers answer both the same way, so a foreign store is never told from a missing one. The organization
   * policy records its answer on the request (`request.gw.reached`); services read it there
   * (runtime/store-access.ts).
   */
  access (organizationId: string, id: string): StoreAccess | undefined
  /** The lane serving store `id` for any caller (a fan-out delivery, checked at preview): the rule's `lane`. */
  laneOf (id: string): LaneConfig | undefined
}

const empty: ReadonlySet<string> = new Set()

// A validated config never changes after its second pass: its indexes are built once, whoever asks (validation, the
// snapshot, fan-out's deliveries, the settings view keyed by them). Any other config (a test's literal) may still be
// edited, so it is not kept.
const indexesByConfig = new WeakMap<GatewayConfig, ConfigIndexes>()

/** The lookup tables of `config`; built once per validated config (see {@link keepIndexes}) or frozen one. */
export function buildIndexes (config: GatewayConfig): ConfigIndexes {
  let indexes = indexesByConfig.get(config)
  if (indexes === undefined) {
    indexes = indexConfig(config)
    if (Object.isFrozen(config)) indexesByConfig.set(config, indexes)
  }
  return indexes
}

/**
 * The loader's call, before the second pass: from here on the config changes only in what no index reads (policy
 * options' defaults), so its indexes (and the settings view keyed by them) are kept for check, create and explain.
 */
export function keepIndexes (config: GatewayConfig): ConfigIndexes {
  const indexes = buildIndexes(config)
  indexesByConfig.set(config, indexes)
  return indexes
}

function indexConfig (config: GatewayConfig): ConfigIndexes {
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

  const accessById = new Map<string, StoreAccess>()
  for (const org of config.organizations) {
    accessById.set(org.id, { id: org.id, store: undefined, lane: undefined })
    for (const store of org.stores) accessById.set(store.id, { id: store.id, store: stores.get(store.id), lane: activeLane(store) })
  }
  const reachable = (organizationId: string): ReadonlySet<string> => reachableById.get(organizationId) ?? empty

  return {
    organizations,
    stores,
    accounts: new Map(config.service_accounts.map((a) => [a.client_id, a])),
    connectedAccounts,
    reachable,
    access: (organizationId, id) => reachable(organizationId).has(id) ? accessById.get(id) : undefined,
    laneOf: (id) => accessById.get(id)?.lane,
  }
}
