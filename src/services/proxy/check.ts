import type { ServiceConfig } from '../../config/types.js'
import type { ServiceSettingProblem } from '../service-module.js'
import { ProxyRouteEntrySchema, proxySettings, type ProxySettings, type ProxyUpstreamConfig } from './settings.js'
import { proxyGroups } from './groups.js'
import { splitProblems } from '../split-settings.js'
import { mirrorProblems } from './mirror-settings.js'
import type { SplitSettings } from '../../upstream/split.js'
import { circuitBreakerProblems } from '../circuit-breaker-settings.js'
import { blockRoutes } from '../service-settings.js'
import { targetUrl } from './upstream-settings.js'

/**
 * What the schema of a proxy block cannot say: every target URL parses, carries no credentials, query or fragment
 * and appears once (a duplicate would get two pools and twice the share); no two routes serve the same method on
 * the same path, and no route path has a dot segment; `upstream` or `upstreams` is given, and every split names
 * only the block's groups. Paths are below `services.<name>`.
 */
export function checkProxySettings (block: ServiceConfig): ServiceSettingProblem[] {
  const settings = proxySettings(block)
  const problems = upstreamProblems(settings)
  for (const [group, upstream] of proxyGroups(settings)) {
    problems.push(...groupProblems(upstream, settings.upstreams === undefined ? 'upstream' : `upstreams.${group}`))
  }
  const groups = proxyGroups(settings).map(([group]) => group)
  if (settings.split !== undefined) problems.push(...splitOf(settings, settings.split, 'split', groups))
  const named = settings.upstreams === undefined ? undefined : groups
  if (settings.mirror !== undefined) problems.push(...mirrorProblems(settings.mirror, named, 'mirror'))

  const served = new Map<string, string>()
  for (const [id, { methods, path, websocket, split, mirror }] of Object.entries(blockRoutes(settings, ProxyRouteEntrySchema))) {
    if (split !== undefined) problems.push(...splitOf(settings, split, `routes.${id}.split`, groups))
    if (mirror !== undefined) problems.push(...mirrorProblems(mirror, named, `routes.${id}.mirror`))
    if (websocket !== undefined && websocket !== false && !methods.includes('GET')) {
      problems.push({ path: `routes.${id}.websocket`, message: 'a WebSocket starts as a GET: a route with websocket must serve GET' })
    }
    if (path.split('/').some((segment) => segment === '.' || segment === '..')) {
      problems.push({ path: `routes.${id}.path`, message: 'dot segments (. and ..) are not allowed in a route path' })
    }
    for (const method of methods) {
      const other = served.get(`${method} ${path}`)
      if (other !== undefined) problems.push({ path: `routes.${id}.methods`, message: `route "${other}" serves ${method} ${path} already` })
      else served.set(`${method} ${path}`, id)
    }
  }
  return problems
}

/** Exactly one of `upstream` (one group) and `upstreams` (named groups). */
function upstreamProblems (settings: ProxySettings): ServiceSettingProblem[] {
  if (settings.upstream === undefined && settings.upstreams === undefined) return [{ path: 'upstream', message: 'is required: give upstream (one group of targets) or upstreams (named groups)' }]
  if (settings.upstream !== undefined && settings.upstreams !== undefined) return [{ path: 'upstreams', message: 'give upstream or upstreams, not both' }]
  if (settings.upstreams !== undefined && Object.keys(settings.upstreams).length === 0) return [{ path: 'upstreams', message: 'names no group: give at least one' }]
  return []
}

/** A split is for a block with named groups, and names only those. */
function splitOf (settings: ProxySettings, split: SplitSettings, at: string, groups: readonly string[]): ServiceSettingProblem[] {
  if (settings.upstreams === undefined) return [{ path: at, message: 'chooses between target groups: give the block upstreams (named groups) instead of upstream' }]
  return splitProblems(split, groups, at)
}

/** One group's targets (each parses, appears once), breaker and outlier ejection; `at` is the group's path. */
function groupProblems (upstream: ProxyUpstreamConfig, at: string): ServiceSettingProblem[] {
  const problems: ServiceSettingProblem[] = []
  const seen = new Map<string, number>()
  upstream.targets.forEach((target, i) => {
    const path = typeof target === 'string' ? `${at}.targets.${i}` : `${at}.targets.${i}.url`
    const problem = targetProblem(targetUrl(target))
    if (problem !== undefined) {
      problems.push({ path, message: problem })
      return
    }
    const key = canonicalTarget(targetUrl(target))
    const first = seen.get(key)
    if (first !== undefined) problems.push({ path, message: `duplicate target (same as ${at}.targets[${first}])` })
    else seen.set(key, i)
  })
  problems.push(...circuitBreakerProblems(upstream.circuit_breaker, `${at}.circuit_breaker`))
  if (upstream.outlier_ejection !== undefined && upstream.targets.length < 2) {
    problems.push({ path: `${at}.outlier_ejection`, message: 'compares a target with its siblings: needs two targets or more' })
  }
  return problems
}

function targetProblem (url: string): string | undefined {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return 'not a valid URL'
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'must be an http or https URL'
  if (parsed.username !== '' || parsed.password !== '') return 'must not carry a user name or password (use upstream.credential)'
  if (parsed.search !== '' || parsed.hash !== '' || url.includes('?') || url.includes('#')) return 'must not have a query or fragment'
  return undefined
}

/** Two spellings of one target (`http://h:80/` and `http://h`) are the same target. */
function canonicalTarget (url: string): string {
  const parsed = new URL(url)
  const path = parsed.pathname.endsWith('/') ? parsed.pathname.slice(0, -1) : parsed.pathname
  return `${parsed.origin}${path}`
}
