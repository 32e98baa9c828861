import type { FastifyReply, FastifyRequest } from 'fastify'
import type { GatewayConfig } from '../config/types.js'
import type { EnvelopeName } from '../errors/envelopes.js'
import type { SharedResources } from './shared-resources.js'
import type { ConfigIndexes } from '../config/indexes.js'

/**
 * One step of a route's chain. It returns (the request goes on) or throws a GatewayError (the error handler
 * renders it in the route's envelope). Steps never write response bodies; they may set headers and record what
 * they learned on `request.gw`.
 */
export type PolicyStep = (request: FastifyRequest, reply: FastifyReply) => void | Promise<void>

/** What a policy factory may use when its step is built (once per route per config snapshot). */
export interface PolicyContext {
  readonly config: GatewayConfig
  readonly indexes: ConfigIndexes
  /** Long-lived objects that survive reloads (limiters, token cache, key sets). */
  readonly shared: SharedResources
  readonly service: string
  readonly routeId: string
  readonly envelope: EnvelopeName
}

/** A problem found in a policy's options beyond what its JSON Schema says. */
export interface PolicyOptionProblem {
  /** Path below the policy's options, e.g. `all/0`. Empty for the whole options object. */
  path: string
  message: string
}

/**
 * A policy plugin: a JSON Schema for its options plus a factory. The folder name under `plugins/` is the YAML key.
 */
export interface PolicyPlugin<Options = any> {
  /** The YAML key. */
  readonly name: string
  readonly description: string
  /** JSON Schema (draft-07, ajv) of the options object; every property has a `description`. */
  readonly schema: Record<string, unknown>
  /** Policies that must appear earlier in the same chain, given these options. */
  requires?(options: Options, config?: GatewayConfig): string[]
  /** Checks that need the whole config (e.g. that named scopes exist). */
  check?(options: Options, config: GatewayConfig, indexes: ConfigIndexes): PolicyOptionProblem[]
  /** Builds the step. Runs once per route when a snapshot is built: make limiters, caches and key sets here. */
  create(options: Options, context: PolicyContext): PolicyStep
}
