import { chooseGroup, type SplitCaller, type SplitChoice, type SplitSettings } from '../../upstream/split.js'
import type { ServiceConfig } from '../../config/types.js'
import { blockRoutes } from '../service-settings.js'
import { ProxyRouteEntrySchema, type ProxySettings, type ProxyUpstreamConfig } from './settings.js'
import type { MirrorSettings } from './mirror-settings.js'
import type { UpstreamSettings } from '../../upstream/settings.js'
import { proxyUpstreamSettings } from './upstream-settings.js'

/** The one group of a block with `upstream:` (no split): its registry key stays the block's name. */
export const SINGLE_GROUP = 'upstream'

/** A block's target groups in the order listed: `upstreams:`, or its `upstream:` as the one group. */
export function proxyGroups (settings: ProxySettings): Array<[string, ProxyUpstreamConfig]> {
  if (settings.upstreams !== undefined) return Object.entries(settings.upstreams)
  return settings.upstream === undefined ? [] : [[SINGLE_GROUP, settings.upstream]]
}

/**
 * A group's upstream key in the registry, which is also its `upstream` label in lanegate_upstream_*: the block's
 * name for `upstream:`, `<block>/<group>` for a group of `upstreams:` (each group its own breakers and budget).
 */
export function groupKey (service: string, settings: ProxySettings, group: string): string {
  return settings.upstreams === undefined ? service : `${service}/${group}`
}

/** The split that decides a route's group: the route's own, else the block's. */
export function routeSplit (settings: ProxySettings & ServiceConfig, routeId: string): SplitSettings | undefined {
  return blockRoutes(settings, ProxyRouteEntrySchema)[routeId]?.split ?? settings.split
}

/** The mirror of a route: its own, else the block's. */
export function routeMirror (settings: ProxySettings & ServiceConfig, routeId: string): MirrorSettings | undefined {
  return blockRoutes(settings, ProxyRouteEntrySchema)[routeId]?.mirror ?? settings.mirror
}

/** The group a request of `routeId` goes to and why; a block with one group (or no split) sends all to its first. */
export function chooseProxyGroup (service: string, settings: ProxySettings & ServiceConfig, routeId: string, caller: SplitCaller): { group: string, upstream: ProxyUpstreamConfig, choice?: SplitChoice } {
  const groups = proxyGroups(settings)
  const [first, firstUpstream] = groups[0]!
  const split = routeSplit(settings, routeId)
  if (split === undefined || settings.upstreams === undefined) return { group: first, upstream: firstUpstream }
  const choice = chooseGroup(split, service, caller, first)
  return { group: choice.group, upstream: settings.upstreams[choice.group] ?? firstUpstream, choice }
}

/** One target group as a request of a route uses it: its registry key (and metrics label) and its settings. */
export interface GroupPlan {
  readonly name: string
  readonly key: string
  readonly config: ProxyUpstreamConfig
  readonly settings: UpstreamSettings
}

/**
 * What a request of one route of a block needs, worked out once per (frozen) block and route: the group it goes to
 * without a split, every group by name, the split that chooses among them and the mirror. The handler then does
 * no lookups, string building or allocation for a route without a split.
 */
export interface RoutePlan {
  readonly first: GroupPlan
  readonly groups: ReadonlyMap<string, GroupPlan>
  readonly split: SplitSettings | undefined
  readonly mirror: MirrorSettings | undefined
}

const plans = new WeakMap<ProxySettings, Map<string, RoutePlan>>()

/** The plan of `routeId` of block `service` (undefined for a block with no target group: never once validated). */
export function routePlan (service: string, settings: ProxySettings & ServiceConfig, routeId: string): RoutePlan | undefined {
  let routes = plans.get(settings)
  if (routes === undefined) {
    routes = new Map()
    plans.set(settings, routes)
  }
  let plan = routes.get(routeId)
  if (plan === undefined) {
    const groups = new Map(proxyGroups(settings).map(([name, config]) => [name, { name, key: groupKey(service, settings, name), config, settings: proxyUpstreamSettings(config) }]))
    const first = groups.values().next().value
    if (first === undefined) return undefined
    // A split needs groups to choose among: with one `upstream:` it has none (the block's check refuses it).
    plan = { first, groups, split: settings.upstreams === undefined ? undefined : routeSplit(settings, routeId), mirror: routeMirror(settings, routeId) }
    routes.set(routeId, plan)
  }
  return plan
}
