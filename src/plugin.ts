/**
 * `lanegate/plugin`: everything a policy plugin is written against. The names exported here are the contract and
 * are kept across releases (docs/plugins.md). Built-in policies under `plugins/` import only this module, so they
 * have no way in that an outside plugin lacks.
 */
import type { TSchema, Static } from '@sinclair/typebox'
import { GatewayError } from './errors/gateway-error.js'
import type { PolicyPlugin } from './pipeline/policy.js'

export type {
  DeclaredError, ExplainRequest, Explanation, PolicyContext, PolicyOptionProblem, PolicyPlugin, PolicyStep, Refusal, RefuseOptions, StepOutcome,
} from './pipeline/policy.js'
export type { Principal, RequestContext } from './runtime/request-context.js'
export type { SharedResources, TokenSlot } from './runtime/shared-resources.js'
export type { CountOutcome } from './runtime/request-counter.js'
export type { GatewayConfig, RateLimitConfig } from './config/types.js'
export type { ConfigIndexes } from './config/indexes.js'
export type { EnvelopeName } from './errors/envelopes.js'
export type { ErrorCode } from './errors/catalogue.js'
/** TypeBox, to declare options once: `Type.Object({...})` is the JSON Schema, `Static<typeof X>` its type. */
export { Type, type Static, type TSchema, type TUnsafe } from '@sinclair/typebox'
export { bearerChallenge, defaultRealm } from './auth/bearer-challenge.js'
export { clientIpKey } from './pipeline/client-ip.js'
/**
 * Open-connection counts for the host (a Map in one process; the primary's under `server.workers` > 1), for
 * policies that bound connections rather than requests (`connection-limit`).
 */
export { connectionSlots, type ConnectionSlots } from './cluster/connection-slots.js'

/**
 * Types a policy whose options are declared with TypeBox: `options` in `create`, `check` and `requires` is
 * `Static<typeof schema>`, and `context.refuse` accepts the codes of `errors`. Returns the plugin unchanged.
 */
export function definePolicy<S extends TSchema, Codes extends string = never> (plugin: PolicyPlugin<Static<S>, Codes> & { readonly schema: S }): PolicyPlugin<Static<S>, Codes> {
  return plugin
}

/** Whether a value is a refusal (what `context.refuse` builds, and what the token verifier throws). */
export function isRefusal (value: unknown): value is GatewayError {
  return value instanceof GatewayError
}
