import type { GatewayConfig, PolicyEntry } from '../config/types.js'
import { policyName } from '../config/semantic-checks.js'
import { routePolicies } from '../config/types.js'
import type { EnvelopeName } from '../plugin/envelope-name.js'
import { JWKS_PATH, METADATA_PATH, TOKEN_PATH } from '../oauth/metadata.js'
import type { PolicyPlugin } from '../plugin/policy.js'
import type { Catalog } from '../pipeline/registry.js'
import { declaredRoutes, moduleForService, type RouteDeclaration } from '../services/service-module.js'
import type { WebSocketLimits } from '../services/websocket-settings.js'

/** One policy of a resolved chain, in run order. */
export interface ChainLink {
  readonly policy: string
  /** Whether it comes from the service's `policies` or the route's own list. */
  readonly from: 'service' | 'route'
  readonly options: unknown
  /** The policy's `summarize`, or its options as compact JSON. */
  readonly summary: string
  /** The policy's `details`: one line per change, empty when it gives none. */
  readonly details: readonly string[]
  /** The plugin, or undefined when the catalog does not know the name (never for a validated config). */
  readonly plugin: PolicyPlugin | undefined
}

/** One served route: what `lanegate routes` lists, `explain` matches and the OpenAPI document describes. */
export interface ServedRoute {
  readonly methods: readonly string[]
  /** Prefix + declared url, fastify syntax. */
  readonly path: string
  /** `oauth` and `gateway` for the gateway's own endpoints. */
  readonly service: string
  readonly routeId: string
  readonly envelope: EnvelopeName
  readonly description: string
  /** Service policies, then the route's own. Empty for the gateway's own endpoints. */
  readonly chain: readonly ChainLink[]
  /** The service's declaration (undefined for the gateway's own endpoints). */
  readonly declaration?: RouteDeclaration
  /** The service's validated settings (undefined for the gateway's own endpoints). */
  readonly settings?: GatewayConfig['services'][string]
  /** The WebSocket limits when a GET of the route may be upgraded (docs/websocket.md); else undefined. */
  readonly websocket?: WebSocketLimits
}

/** The gateway's own endpoints: no policy chain (the token endpoint runs its own named steps). */
export const OPENAPI_PATH = '/openapi.json'
const gatewayEndpoints: readonly Omit<ServedRoute, 'chain'>[] = [
  { methods: ['POST'], path: TOKEN_PATH, service: 'oauth', routeId: 'token', envelope: 'oauth', description: 'OAuth 2.0 client-credentials token endpoint (client authentication, issuer.token_rate_limit, issuer.failed_auth_limit).' },
  { methods: ['GET'], path: METADATA_PATH, service: 'oauth', routeId: 'metadata', envelope: 'oauth', description: 'RFC 8414 authorization server metadata.' },
  { methods: ['GET'], path: JWKS_PATH, service: 'oauth', routeId: 'jwks', envelope: 'oauth', description: 'The public keys that verify issued tokens.' },
  { methods: ['GET'], path: '/healthz', service: 'gateway', routeId: 'healthz', envelope: 'plain', description: 'Liveness: the gateway answers.' },
  { methods: ['GET'], path: OPENAPI_PATH, service: 'gateway', routeId: 'openapi', envelope: 'plain', description: 'This API\'s OpenAPI 3.1 document.' },
]

/**
 * Every route a validated config serves, in config order: the gateway's own endpoints, then each configured
 * service's declared routes that gateway.yaml lists, with the chain the snapshot builds for it.
 */
export function servedRoutes (config: GatewayConfig, catalog: Catalog): ServedRoute[] {
  const rows: ServedRoute[] = gatewayEndpoints.map((endpoint) => ({ ...endpoint, chain: [] }))
  for (const [service, settings] of Object.entries(config.services)) {
    const module = moduleForService(catalog.services, service, settings)
    if (module === undefined) continue
    const prefix = settings.prefix.replace(/\/+$/, '')
    for (const declaration of declaredRoutes(module, settings)) {
      const entry = settings.routes[declaration.id]
      if (entry === undefined) continue
      rows.push({
        methods: [declaration.method].flat(),
        path: servedPath(prefix, declaration.url),
        service,
        routeId: declaration.id,
        envelope: settings.envelope,
        description: declaration.description,
        chain: [
          ...settings.policies.map((p) => link(p, 'service', catalog)),
          ...routePolicies(entry).map((p) => link(p, 'route', catalog)),
        ],
        declaration,
        settings,
        websocket: module.websocketRoute?.(settings, declaration.id),
      })
    }
  }
  return rows
}

/**
 * A declared route's path under its service's prefix, as fastify serves it: a route at `/` is the prefix itself
 * (fastify's default `prefixTrailingSlash: 'both'` also serves the prefix with a trailing slash; see `alsoServed`).
 */
export function servedPath (prefix: string, url: string): string {
  return url === '/' && prefix !== '' ? prefix : prefix + url
}

/** The other spelling fastify serves for a route at its prefix's `/` (`<prefix>/`), if any. */
export function alsoServed (path: string, url: string): string | undefined {
  return url === '/' && path !== '/' ? `${path}/` : undefined
}

function link (entry: PolicyEntry, from: 'service' | 'route', catalog: Catalog): ChainLink {
  const policy = policyName(entry)
  const options = entry[policy] ?? {}
  const plugin = catalog.plugins.get(policy)
  return { policy, from, options, summary: plugin?.summarize?.(options) ?? JSON.stringify(options), details: plugin?.details?.(options) ?? [], plugin }
}

/** The JSON `lanegate routes --json` prints (plugins left out). */
export function routesJson (rows: readonly ServedRoute[]): unknown {
  return {
    routes: rows.map((row) => ({
      methods: row.methods,
      path: row.path,
      service: row.service,
      route: row.routeId,
      envelope: row.envelope,
      description: row.description,
      // `details` only on links whose policy gives some, so every other link's JSON stays as it was.
      chain: row.chain.map((l) => ({ policy: l.policy, from: l.from, options: l.options, summary: l.summary, ...(l.details.length === 0 ? {} : { details: l.details }) })),
      // Only on routes that upgrade, so the rows of every other route stay as they were.
      ...(row.websocket === undefined ? {} : { websocket: row.websocket }),
    })),
  }
}

/**
 * The human table `lanegate routes` prints: one line per route, the chain as `policy(summary) → …`; a route that
 * upgrades to a WebSocket shows `+WS` after its methods.
 */
export function routesTable (rows: readonly ServedRoute[]): string {
  const header = ['METHOD', 'PATH', 'SERVICE', 'ROUTE', 'ENVELOPE', 'CHAIN']
  const lines = rows.map((row) => [
    row.methods.join(',') + (row.websocket === undefined ? '' : '+WS'),
    row.path,
    row.service,
    row.routeId,
    row.envelope,
    row.chain.length === 0 ? '(gateway endpoint, no policy chain)' : row.chain.map((l) => `${l.policy}(${l.summary})`).join(' → '),
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? '').length)))
  return [header, ...lines].map((cells) => cells.map((c, i) => i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)).join('  ')).join('\n')
}
