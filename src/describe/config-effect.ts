import type { GatewayConfig } from '../config/types.js'
import type { Catalog } from '../pipeline/registry.js'
import { explainRequest } from './explain.js'
import { servedRoutes, type ServedRoute } from './route-table.js'

/** One side of a config change: a validated config and the catalog it was checked against. */
export interface ConfigSide {
  config: GatewayConfig
  catalog: Catalog
}

/** What a config change does, route by route (`lanegate config diff --effect`). */
export interface ConfigEffect {
  /** `METHOD PATH (service/route)` of the routes served after and not before. */
  added: string[]
  removed: string[]
  /** Routes served on both sides whose resolved policy chain differs. */
  chainsChanged: { route: string, before: string, after: string }[]
  /** Per route, the service accounts the chain lets through on one side and refuses on the other. */
  access: { route: string, gains: string[], loses: string[] }[]
}

/**
 * Compares the routes two configs serve and, through the explain engine, which service accounts each route's chain
 * lets through (a pass, or a verdict that depends on what only a real request knows, such as a rate-limit counter)
 * before and after. An account that exists on one side only has no access on the other. Nothing is sent.
 */
export function configEffect (before: ConfigSide, after: ConfigSide): ConfigEffect {
  const routesBefore = policed(before)
  const routesAfter = policed(after)
  const effect: ConfigEffect = { added: [], removed: [], chainsChanged: [], access: [] }
  for (const [key, row] of routesAfter) if (!routesBefore.has(key)) effect.added.push(label(row))
  for (const [key, row] of routesBefore) if (!routesAfter.has(key)) effect.removed.push(label(row))
  for (const [key, row] of routesAfter) {
    const old = routesBefore.get(key)
    if (old !== undefined && chainText(old) !== chainText(row)) effect.chainsChanged.push({ route: label(row), before: chainText(old), after: chainText(row) })
  }
  for (const key of new Set([...routesBefore.keys(), ...routesAfter.keys()])) {
    const row = routesAfter.get(key) ?? routesBefore.get(key) as ServedRoute
    const was = allowed(before, routesBefore.get(key))
    const is = allowed(after, routesAfter.get(key))
    const gains = [...is].filter((c) => !was.has(c)).sort()
    const loses = [...was].filter((c) => !is.has(c)).sort()
    if (gains.length > 0 || loses.length > 0) effect.access.push({ route: label(row), gains, loses })
  }
  return effect
}

/** The routes with a policy chain (the gateway's own endpoints have none and never change), by method and path. */
function policed (side: ConfigSide): Map<string, ServedRoute> {
  return new Map(servedRoutes(side.config, side.catalog).filter((r) => r.chain.length > 0).map((r) => [`${r.methods.join(',')} ${r.path}`, r]))
}

function label (row: ServedRoute): string {
  return `${row.methods.join(',')} ${row.path} (${row.service}/${row.routeId})`
}

function chainText (row: ServedRoute): string {
  return row.chain.map((link) => `${link.policy}: ${link.summary}`).join(' → ')
}

/** The service accounts the route's chain does not refuse for sure, on this side. */
function allowed (side: ConfigSide, row: ServedRoute | undefined): Set<string> {
  const clients = new Set<string>()
  if (row === undefined) return clients
  // A concrete path for the route's own pattern: every parameter gets a placeholder value.
  const path = row.path.replace(/:[A-Za-z0-9_]+/g, 'x')
  const method = row.methods[0] ?? 'GET'
  for (const account of side.config.service_accounts) {
    const result = explainRequest(side.config, side.catalog, method, path, { kind: 'client', clientId: account.client_id })
    if (result.result.outcome !== 'refuse') clients.add(account.client_id)
  }
  return clients
}

/** The effect as `lanegate config diff --effect` prints it; empty when the change affects no route. */
export function formatEffect (effect: ConfigEffect): string {
  const lines: string[] = []
  if (effect.added.length > 0) lines.push('routes added:', ...effect.added.map((r) => `  + ${r}`))
  if (effect.removed.length > 0) lines.push('routes removed:', ...effect.removed.map((r) => `  - ${r}`))
  if (effect.chainsChanged.length > 0) {
    lines.push('chains changed:')
    for (const c of effect.chainsChanged) lines.push(`  ~ ${c.route}`, `      before: ${c.before}`, `      after:  ${c.after}`)
  }
  if (effect.access.length > 0) {
    lines.push('access:')
    for (const a of effect.access) {
      lines.push(`  ${a.route}`)
      if (a.gains.length > 0) lines.push(`      gains: ${a.gains.join(', ')}`)
      if (a.loses.length > 0) lines.push(`      loses: ${a.loses.join(', ')}`)
    }
  }
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`
}
