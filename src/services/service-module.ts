import type { FastifyReply, FastifyRequest, HTTPMethods, RouteShorthandOptions } from 'fastify'
import type { SharedResources } from '../pipeline/shared-resources.js'
import type { GatewayConfig, ServiceConfig } from '../config/types.js'
import type { ConfigIndexes } from '../config/indexes.js'

/**
 * What a handler returns: the body to send (fastify serializes it), or the reply itself when it sent already. A
 * handler that answers from memory may be synchronous and return the reply it sent (no promise per request).
 */
export type RouteHandler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown> | FastifyReply

/** One route a service serves; the YAML `routes:` map names it by `id` and gives its policies. */
export interface RouteDefinition {
  /** Stable id used as the key under `services.<name>.routes` in gateway.yaml. */
  id: string
  method: HTTPMethods | HTTPMethods[]
  /** Path below the service's prefix, fastify syntax (`/payment-intents/:intent`). */
  url: string
  /** Scope(s) the route should require; `lanegate validate` warns when a chain lacks them. */
  description: string
  /** Body limit for this route in bytes; default server.body_limit_bytes. */
  bodyLimit?: number
  /** Leave the body unparsed (`request.raw` is streamed on), for the live proxy. */
  rawBody?: boolean
  /** Extra fastify route options (e.g. `schema`). Validation errors are rendered by the gateway's handler. */
  options?: RouteShorthandOptions
  handler: RouteHandler
}

/** A problem in a service's own settings, with a path below `services.<name>`. */
export interface ServiceSettingProblem {
  path: string
  message: string
}

/** Everything a service needs when it is built at boot. Per-request settings come from `request.gw.snapshot`. */
export interface ServiceDeps {
  readonly shared: SharedResources
  /** The current snapshot's config (for boot-time resources; handlers read `request.gw.snapshot`). */
  readonly currentConfig: () => GatewayConfig
}

/**
 * A service: its YAML block's extra settings and the routes it serves. `settingsSchema` holds JSON Schema
 * properties for the keys the service adds beside `prefix`, `envelope`, `policies` and `routes`.
 */
export interface ServiceModule {
  /** The key under `services:` in gateway.yaml. */
  readonly name: string
  readonly description: string
  /** The ids of the routes `build` returns, so validation can check `routes:` keys without building. */
  readonly routeIds?: readonly string[]
  readonly settingsSchema: Record<string, Record<string, unknown>>
  /** Settings keys that must be present. */
  readonly requiredSettings?: string[]
  /** Cross-checks against the whole config (e.g. stores referenced by operations exist). */
  check?(settings: ServiceConfig, config: GatewayConfig, indexes: ConfigIndexes): ServiceSettingProblem[]
  /** Builds the routes once at boot. Long-lived resources (agents, caches) are made here and closed in `close`. */
  build (deps: ServiceDeps): { routes: RouteDefinition[], close?: () => Promise<void> }
}
