/**
 * `lanegate/plugin`: everything a policy plugin is written against. The names exported here are the contract and
 * are kept across releases (docs/plugins.md). Built-in policies under `plugins/` import only this module, so they
 * have no way in that an outside plugin lacks. Nothing under `src/plugin/` imports the rest of the gateway (a
 * dependency rule checks it): the gateway implements these interfaces and builds on its refusals, not the reverse.
 */
import type { TSchema, Static } from '@sinclair/typebox'
import { GatewayError } from './gateway-error.js'
import type { PolicyPlugin } from './policy.js'

export type {
  DeclaredError, ExplainRequest, Explanation, PolicyContext, PolicyOptionProblem, PolicyPlace, PolicyPlugin, PolicyStep, Refusal, RefuseOptions, StepOutcome,
} from './policy.js'
export type { Principal, RequestState } from './request-state.js'
export type { CountOutcome, LimiterHandle } from './limiter.js'
export type { TokenSlot, TokenVerifierView } from './tokens.js'
export type { ApiKeyFailure, ApiKeySlot, ApiKeyVerifierView } from './api-keys.js'
export { RESPONSE_BODY_LIMIT, type ResponseHead, type ResponseHeadHook, type ResponseSentHook, type SentResponse } from './response-phase.js'
export type { GatewaySettings, RateLimitSettings, StoreReach } from './gateway-settings.js'
export type { EnvelopeName } from './envelope-name.js'
export type { ErrorCode } from './catalogue.js'
export type { ClientCertificate } from './client-certificate.js'
export type { ReplacedAnswer, ResponseBodyHook, UpstreamAnswer } from './body-hook.js'
export type { RequestBodyOptions } from './body-phase.js'
/** TypeBox, to declare options once: `Type.Object({...})` is the JSON Schema, `Static<typeof X>` its type. */
export { Type, type Static, type TSchema, type TUnsafe } from '@sinclair/typebox'
export { bearerChallenge, defaultRealm } from './bearer-challenge.js'
export { clientIpKey } from './client-ip.js'
export type { ConnectionSlots } from './connection-slots.js'
export { compileOptionSchema, optionSchemaProblems, type ErrorObject, type ValidateFunction } from './json-schema.js'

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
