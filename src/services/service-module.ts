import type { FastifyReply, FastifyRequest, HTTPMethods, RouteShorthandOptions } from 'fastify'
import type { SharedResources } from '../runtime/shared-resources.js'
import type { GatewayConfig, ServiceConfig } from '../config/types.js'
import type { ConfigIndexes } from '../config/indexes.js'
import type { WebSocketLimits } from './websocket-settings.js'

/**
 * What a handler returns: the body to send (fastify serializes it), or the reply itself when it sent already. A
 * handler that answers from memory may be synchronous and return the reply it sent (no promise per request); one
 * that answers later through `reply` on its own (a relay, from its engine's callback) returns undefined.
 */
export type RouteHandler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown> | FastifyReply | undefined

/**
 * One route a service serves, declared once: validation (route ids under `services.<name>.routes`), reload and
 * mounting read the same list, and so will `lanegate routes` and the OpenAPI document.
 */
export interface RouteDeclaration {
  /** Stable id used as the key under `services.<name>.routes` in gateway.yaml. */
  readonly id: string
  readonly method: HTTPMethods | readonly HTTPMethods[]
  /** Path below the service's prefix, fastify syntax (`/payment-intents/:intent`). */
  readonly url: string
  /** One or two sentences for docs and `lanegate routes`. */
  readonly description: string
  /** Scopes the route expects its chain to require (documentation and OpenAPI security). */
  readonly scopes?: readonly string[]
  /**
   * JSON Schema of the request body (documentation and OpenAPI); the handler still validates. A function of the
   * service's validated settings when the body depends on them (fan-out operations, enabled reports).
   */
  readonly body?: Readonly<Record<string, unknown>> | ((settings: ServiceConfig) => Readonly<Record<string, unknown>>)
  /** Error codes the handler itself may answer with (OpenAPI responses); the chain's codes come from its policies. */
  readonly errors?: readonly string[]
  /** Body limit for this route in bytes; default server.body_limit_bytes. */
  readonly bodyLimit?: number
  /** Leave the body unparsed (`request.raw` is streamed on), for the live proxy. */
  readonly rawBody?: boolean
}

/** How a declared route is served. */
export interface RouteImplementation {
  handler: RouteHandler
  /** Extra fastify route options (e.g. `schema`). Validation errors are rendered by the gateway's handler. */
  options?: RouteShorthandOptions
}

/** A declared route with its implementation: what `mountServiceRoutes` registers. */
export type RouteDefinition = RouteDeclaration & RouteImplementation

/**
 * A built service's handlers: by route id, or (services whose routes come from their settings) one function
 * that serves any declared route.
 */
export type RouteHandlers =
  | Readonly<Record<string, RouteHandler | RouteImplementation>>
  | ((route: RouteDeclaration) => RouteHandler | RouteImplementation)

/** A problem in a service's own settings, with a path below `services.<name>`. */
export interface ServiceSettingProblem {
  path: string
  message: string
}

/**
 * The shared resources a service may use. Keys, the token and API-key verifiers and the limiters belong to the
 * policy chain that runs before a service's handler; a service never reads them.
 */
export type ServiceResources = Pick<SharedResources, 'logger' | 'store' | 'upstreams'>

/** Everything a service needs when it is built at boot. Per-request settings come from `request.gw.snapshot`. */
export interface ServiceDeps {
  /** The block's key under `services:` (a service type's blocks have names of their own). */
  readonly service: string
  readonly shared: ServiceResources
  /** The current snapshot's config (for boot-time resources; handlers read `request.gw.snapshot`). */
  readonly currentConfig: () => GatewayConfig
}

/**
 * A service: its YAML block's extra settings, the routes it declares and how it serves them. `settingsSchema`
 * holds JSON Schema properties for the keys the service adds beside `prefix`, `envelope`, `policies` and `routes`.
 */
export interface ServiceModule {
  /**
   * The key under `services:` in gateway.yaml; for a service type (`typed`), the value of `type` that selects it.
   */
  readonly name: string
  /**
   * A service type: any block under `services:` whose `type` names it is one of its instances, under a name of
   * the operator's choosing, and several may coexist (`type: proxy`). Its settings schema declares `type`. A fixed
   * service (the default) has exactly one block, under its own name.
   */
  readonly typed?: boolean
  readonly description: string
  /**
   * The routes, declared once. A fixed list, or a function of the service's validated settings for a service
   * whose routes come from gateway.yaml (then `routeEntrySchema` gives the shape of its `routes:` entries and
   * the list is fixed at start: a change of it is a restart-required change).
   */
  readonly routes: readonly RouteDeclaration[] | ((settings: ServiceConfig) => readonly RouteDeclaration[])
  /** JSON Schema of one `routes:` entry when `routes` is a function; its chain is under `policies`. */
  readonly routeEntrySchema?: Record<string, unknown>
  readonly settingsSchema: Record<string, Record<string, unknown>>
  /** Settings keys that must be present. */
  readonly requiredSettings?: string[]
  /** Cross-checks against the whole config (e.g. stores referenced by operations exist). */
  check?(settings: ServiceConfig, config: GatewayConfig, indexes: ConfigIndexes): ServiceSettingProblem[]
  /** Builds the handlers once at boot. Long-lived resources (agents, caches) are made here and closed in `close`. */
  build (deps: ServiceDeps): { handlers: RouteHandlers, close?: () => Promise<void> }
  /**
   * Brings the shared resources that follow the config (a proxy block's upstream) in line with a new snapshot:
   * called with every block this module serves in it (none when the last one was removed), once the snapshot is
   * built, at boot and on each reload, before it is swapped in. A block the reload removed is never passed again.
   */
  reconcile?(blocks: ReadonlyMap<string, ServiceConfig>, shared: ServiceResources): void
  /**
   * The limits of route `routeId` when these settings let it be upgraded to a WebSocket (docs/websocket.md);
   * undefined when they do not (the default for every route of a service without it).
   */
  websocketRoute?(settings: ServiceConfig, routeId: string): WebSocketLimits | undefined
}

/** The WebSocket limits of a route of `services.<service>`, or undefined when it is not upgraded. */
export function routeWebSocketLimits (modules: readonly ServiceModule[], service: string, settings: ServiceConfig, routeId: string): WebSocketLimits | undefined {
  return moduleForService(modules, service, settings)?.websocketRoute?.(settings, routeId)
}

/**
 * The module serving the block `services.<service>`: the service type its `type` names, or else the fixed service
 * of that name; `undefined` when there is none (the first validation pass reports it).
 */
export function moduleForService (modules: readonly ServiceModule[], service: string, settings: ServiceConfig): ServiceModule | undefined {
  const type = settings.type
  if (typeof type === 'string') return modules.find((module) => module.typed === true && module.name === type)
  return modules.find((module) => module.typed !== true && module.name === service)
}

/** Calls every module's `reconcile` with its blocks in `config` (the gateway, for each snapshot it builds). */
export function reconcileServices (modules: readonly ServiceModule[], config: GatewayConfig, shared: ServiceResources): void {
  for (const module of modules) {
    if (module.reconcile === undefined) continue
    const blocks = new Map<string, ServiceConfig>()
    for (const [service, settings] of Object.entries(config.services)) {
      if (moduleForService(modules, service, settings) === module) blocks.set(service, settings)
    }
    module.reconcile(blocks, shared)
  }
}

/** The routes a service declares for these settings (its fixed list, or the one its settings give). */
export function declaredRoutes (module: ServiceModule, settings: ServiceConfig): readonly RouteDeclaration[] {
  return typeof module.routes === 'function' ? module.routes(settings) : module.routes
}

/** Joins a service's declared routes with the handlers `build` returned; a declared route without one is a bug. */
export function serviceRoutes (module: ServiceModule, built: { handlers: RouteHandlers }, settings: ServiceConfig): RouteDefinition[] {
  return declaredRoutes(module, settings).map((route) => {
    const served = typeof built.handlers === 'function' ? built.handlers(route) : built.handlers[route.id]
    if (served === undefined) throw new Error(`service ${module.name} has no handler for its route "${route.id}"`)
    return typeof served === 'function' ? { ...route, handler: served } : { ...route, ...served }
  })
}
