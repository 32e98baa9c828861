import type { ServiceConfig } from '../../config/types.js'
import type { ServiceSettingProblem } from '../service-module.js'
import { ProxyRouteEntrySchema, proxySettings } from './settings.js'
import { circuitBreakerProblems } from '../circuit-breaker-settings.js'
import { blockRoutes } from '../service-settings.js'
import { targetUrl } from './upstream-settings.js'

/**
 * What the schema of a proxy block cannot say: every target URL parses, carries no credentials, query or fragment
 * and appears once (a duplicate would get two pools and twice the share); no two routes serve the same method on
 * the same path, and no route path has a dot segment. Paths are below `services.<name>`.
 */
export function checkProxySettings (block: ServiceConfig): ServiceSettingProblem[] {
  const settings = proxySettings(block)
  const problems: ServiceSettingProblem[] = []
  const seen = new Map<string, number>()
  settings.upstream.targets.forEach((target, i) => {
    const at = typeof target === 'string' ? `upstream.targets.${i}` : `upstream.targets.${i}.url`
    const problem = targetProblem(targetUrl(target))
    if (problem !== undefined) {
      problems.push({ path: at, message: problem })
      return
    }
    const key = canonicalTarget(targetUrl(target))
    const first = seen.get(key)
    if (first !== undefined) problems.push({ path: at, message: `duplicate target (same as upstream.targets[${first}])` })
    else seen.set(key, i)
  })

  problems.push(...circuitBreakerProblems(settings.upstream.circuit_breaker, 'upstream.circuit_breaker'))
  if (settings.upstream.outlier_ejection !== undefined && settings.upstream.targets.length < 2) {
    problems.push({ path: 'upstream.outlier_ejection', message: 'compares a target with its siblings: needs two targets or more' })
  }

  const served = new Map<string, string>()
  for (const [id, { methods, path, websocket }] of Object.entries(blockRoutes(settings, ProxyRouteEntrySchema))) {
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
