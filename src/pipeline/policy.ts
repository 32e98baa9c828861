import type { FastifyReply, FastifyRequest } from 'fastify'
import type { GatewayConfig } from '../config/types.js'
import type { EnvelopeName } from '../errors/envelopes.js'
import type { GatewayError } from '../errors/gateway-error.js'
import type { SharedResources } from './shared-resources.js'
import type { ConfigIndexes } from '../config/indexes.js'

/**
 * What a step gives back: nothing (the request goes on) or the GatewayError that refuses it.
 *
 * Refusals are returned rather than thrown because a `throw` is what made them expensive: V8 builds a message
 * object for every throw, and inside a request a thrown 429 cost ≈ 20 µs of its ≈ 115 µs under a flood (the
 * slow VM of bench run G; docs/performance.md). A thrown error still refuses the request the same way, so
 * helpers deep inside a step, and unexpected failures, may throw.
 */
export type StepOutcome = GatewayError | void

/**
 * One step of a route's chain: returns nothing (go on) or a GatewayError (the error handler renders it in the
 * route's envelope), directly or through a promise. Steps never write response bodies; they may set headers and
 * record what they learned on `request.gw`.
 */
export type PolicyStep = (request: FastifyRequest, reply: FastifyReply) => StepOutcome | Promise<StepOutcome>

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
