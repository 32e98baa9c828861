/**
 * `lanegate/client`: a typed client of a lanegate gateway (docs/client.md). Imports nothing of the server.
 */
export { LanegateClient, defaultPrefixes, type LanegateClientOptions, type ServicePrefixes } from './lanegate-client.js'
export { TokenSource, type TokenRefreshFailure, type TokenSourceOptions } from './token-source.js'
export { LanegateError, LanegateNetworkError, isLanegateError, type LanegateErrorInit, type LanegateErrorSource } from './errors.js'
export { codeOfAnswer, isLanegateErrorCode, lanegateErrorCodes, type LanegateErrorCode } from './error-codes.js'
export { backoffMs, type RetryOptions } from './retry-policy.js'
export { systemClock, type Clock } from './clock.js'
export type { Answer } from './answer.js'
export type { CallOptions } from './http-core.js'
export type * from './payments.js'
export type * from './content.js'
export type * from './live.js'
export type * from './fanout.js'
export type * from './exchange.js'
