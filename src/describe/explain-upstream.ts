import type { ConfigIndexes } from '../config/indexes.js'
import type { GatewayConfig } from '../config/types.js'
import type { Principal } from '../runtime/request-context.js'
import { chooseProxyGroup, groupKey, routeMirror, routeSplit } from '../services/proxy/groups.js'
import { proxySettings } from '../services/proxy/settings.js'
import { laneVersion } from '../services/live/lane-version.js'
import { liveSettings } from '../services/live/settings.js'
import { describeChoice, type SplitCaller, type SplitChoice, type StickyKey } from '../upstream/split.js'
import type { ServedRoute } from './route-table.js'

/** Where a proxied request would be sent: the target group, its upstream (registry key, metrics label), and why. */
export interface UpstreamVerdict {
  readonly group: string
  readonly upstream: string
  readonly reason: string
  /** The mirror group a copy may go to, and the share copied (a request sent to that group is not copied). */
  readonly mirror?: { readonly upstream: string, readonly percent: number }
}

/** What explain knows of the request beside its route: the caller, the path's parameters and the headers given. */
export interface ExplainedRequest {
  readonly params: Readonly<Record<string, string>>
  readonly principal: Principal | undefined
  readonly headers: Readonly<Record<string, string>>
}

/**
 * The target group a request of a proxy route (or the live proxy) would go to and why (a rule, a weight bucket,
 * the fallback), by the same choice the handler makes; undefined for a route of another service.
 */
export function explainUpstream (config: GatewayConfig, indexes: ConfigIndexes, row: ServedRoute, request: ExplainedRequest): UpstreamVerdict | undefined {
  if (row.settings === undefined) return undefined
  if (row.service === 'live') return explainLane(config, indexes, request)
  if (row.settings.type !== 'proxy') return undefined
  const settings = proxySettings(row.settings)
  const caller = callerOf(request, organizationStore(row, request, indexes))
  const { group, choice } = chooseProxyGroup(row.service, settings, row.routeId, caller)
  const split = routeSplit(settings, row.routeId)
  const where = split === settings.split ? `services.${row.service}.split` : `services.${row.service}.routes.${row.routeId}.split`
  const reason = settings.upstreams === undefined ? 'one group of targets (upstream:)' : reasonOf(choice, where, split?.sticky ?? 'client')
  const mirror = routeMirror(settings, row.routeId)
  const copied = mirror === undefined || mirror.upstream === group ? {} : { mirror: { upstream: groupKey(row.service, settings, mirror.upstream), percent: mirror.percent } }
  return { group, upstream: groupKey(row.service, settings, group), reason, ...copied }
}

function explainLane (config: GatewayConfig, indexes: ConfigIndexes, request: ExplainedRequest): UpstreamVerdict | undefined {
  const storeId = request.params.store_org_id
  const store = storeId === undefined ? undefined : indexes.stores.get(storeId)
  if (store?.lane === undefined || !store.installActive) return undefined
  const split = liveSettings(config).split
  const version = laneVersion(store.id, store.lane, split, callerOf(request, store.id))
  const reason = store.lane.next === undefined
    ? 'the store\'s lane has no next version'
    : split === undefined ? 'services.live.split is not set: the store\'s lane' : reasonOf(version.choice, 'services.live.split', split.sticky)
  return { group: version.group, upstream: version.key, reason }
}

function reasonOf (choice: SplitChoice | undefined, where: string, sticky: StickyKey): string {
  return choice === undefined ? 'no split: the first group' : `${where}: ${describeChoice(choice, sticky)}`
}

/** The store the route's `organization` policy would resolve from its path parameter, when that names a store. */
function organizationStore (row: ServedRoute, request: ExplainedRequest, indexes: ConfigIndexes): string | undefined {
  const link = row.chain.find((l) => l.policy === 'organization')
  const param = (link?.options as { param?: string } | undefined)?.param
  const id = param === undefined ? undefined : request.params[param]
  return id !== undefined && indexes.stores.has(id) ? id : undefined
}

function callerOf (request: ExplainedRequest, storeId: string | undefined): SplitCaller {
  const headers = new Map(Object.entries(request.headers).map(([name, value]) => [name.toLowerCase(), value]))
  return {
    clientId: request.principal?.clientId,
    organizationId: request.principal?.organizationId,
    storeId,
    header: (name) => headers.get(name.toLowerCase()),
  }
}
