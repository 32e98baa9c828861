import type { GatewayConfig } from '../config/types.js'
import { groupKey, proxyGroups } from '../services/proxy/groups.js'
import { proxySettings } from '../services/proxy/settings.js'
import { blockRoutes } from '../services/service-settings.js'
import { ProxyRouteEntrySchema } from '../services/proxy/settings.js'
import { LANE_GROUPS } from '../services/live/lane-version.js'
import type { SplitSettings } from '../upstream/split.js'

/** One split as the console's Upstreams view lists it: its groups with weight and share, and its rules. */
export interface SplitView {
  readonly service: string
  /** Where it is declared: `split`, `routes.<id>.split`. */
  readonly at: string
  readonly sticky: string
  readonly fallback: string | null
  readonly rules: ReadonlyArray<{ readonly upstream: string, readonly match: string }>
  /** Each group with its upstream's name in the table above (`pricing/next`; for the live proxy `<store>/next`). */
  readonly groups: ReadonlyArray<{ readonly group: string, readonly upstream: string, readonly weight: number | null, readonly percent: number | null }>
}

/** Views made once per config (the console polls the Upstreams view every second; a config changes only on reload). */
const viewsOfConfig = new WeakMap<GatewayConfig, readonly SplitView[]>()

/** Every split of the config (the proxy blocks' and their routes', and the live proxy's), read from the config alone. */
export function splitsOf (config: GatewayConfig): readonly SplitView[] {
  let views = viewsOfConfig.get(config)
  if (views === undefined) {
    views = splitViews(config)
    viewsOfConfig.set(config, views)
  }
  return views
}

function splitViews (config: GatewayConfig): SplitView[] {
  const views: SplitView[] = []
  for (const [service, block] of Object.entries(config.services)) {
    if (block.type !== 'proxy') continue
    const settings = proxySettings(block)
    if (settings.upstreams === undefined) continue
    const groups = proxyGroups(settings).map(([group]) => ({ group, upstream: groupKey(service, settings, group) }))
    if (settings.split !== undefined) views.push(viewOf(service, 'split', settings.split, groups))
    for (const [id, route] of Object.entries(blockRoutes(settings, ProxyRouteEntrySchema))) {
      if (route.split !== undefined) views.push(viewOf(service, `routes.${id}.split`, route.split, groups))
    }
  }
  const live = (config.services.live as { split?: SplitSettings } | undefined)?.split
  if (live !== undefined) views.push(viewOf('live', 'split', live, LANE_GROUPS.map((group) => ({ group, upstream: group === 'lane' ? '<store>' : '<store>/next' }))))
  return views
}

function viewOf (service: string, at: string, split: SplitSettings, groups: ReadonlyArray<{ group: string, upstream: string }>): SplitView {
  const total = Object.values(split.weights ?? {}).reduce((sum, w) => sum + w, 0)
  return {
    service,
    at,
    sticky: split.sticky,
    fallback: split.fallback ?? null,
    rules: split.rules.map((rule) => ({ upstream: rule.upstream, match: matchText(rule.match) })),
    groups: groups.map(({ group, upstream }) => {
      const weight = split.weights?.[group]
      return { group, upstream, weight: weight ?? null, percent: weight === undefined || total === 0 ? null : Math.round(weight * 1000 / total) / 10 }
    }),
  }
}

/** A rule's conditions in one line: `header x-canary=1|yes, stores org_a`. */
function matchText (match: SplitSettings['rules'][number]['match']): string {
  const parts: string[] = []
  if (match.header !== undefined) parts.push(`header ${match.header.name}=${match.header.values.join('|')}`)
  if (match.clients !== undefined) parts.push(`clients ${match.clients.join(' ')}`)
  if (match.organizations !== undefined) parts.push(`organizations ${match.organizations.join(' ')}`)
  if (match.stores !== undefined) parts.push(`stores ${match.stores.join(' ')}`)
  return parts.join(', ')
}
