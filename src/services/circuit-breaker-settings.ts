import { Type, type Static } from '@sinclair/typebox'
import type { ServiceSettingProblem } from './service-module.js'

/** The share and the window of a circuit breaker's rate rules (`failure_rate`, `slow`). */
const rateRule = {
  percent: Type.Integer({ minimum: 1, maximum: 100, description: 'Share of the window\'s answers, in percent, at or above which the breaker opens.' }),
  window_seconds: Type.Integer({ minimum: 1, maximum: 3600, default: 30, description: 'The window: the last this many seconds.' }),
  min_requests: Type.Integer({ minimum: 1, maximum: 1000000, default: 20, description: 'Fewer answers than this in the window never open the breaker.' }),
}

/** `upstream.circuit_breaker`: one breaker per target (src/upstream/circuit-breaker.ts). */
export const CircuitBreakerSchema = Type.Object({
  failure_statuses: Type.Array(Type.Integer({ minimum: 100, maximum: 599 }), {
    uniqueItems: true,
    default: [500, 502, 503, 504],
    description: 'Answer statuses that count as failures (a no-answer failure always counts).',
  }),
  consecutive_failures: Type.Optional(Type.Integer({ minimum: 1, maximum: 100000, description: 'Opens after this many failures in a row.' })),
  failure_rate: Type.Optional(Type.Object(rateRule, { additionalProperties: false, description: 'Opens when failures reach `percent` % of at least `min_requests` answers over the last `window_seconds`.' })),
  slow: Type.Optional(Type.Object({
    ms: Type.Integer({ minimum: 1, maximum: 600000, description: 'An answer whose head takes this long or longer is slow.' }),
    ...rateRule,
  }, { additionalProperties: false, description: 'Opens when slow answers reach `percent` % of at least `min_requests` answers over the last `window_seconds`.' })),
  open_seconds: Type.Integer({ minimum: 1, maximum: 86400, default: 30, description: 'How long an opened breaker keeps the target out the first time.' }),
  max_open_seconds: Type.Integer({ minimum: 1, maximum: 86400, default: 300, description: 'Each failed half-open trial doubles the open time, up to this.' }),
  half_open_requests: Type.Integer({ minimum: 1, maximum: 1000, default: 1, description: 'Real requests let through once the open time is over: all succeed, it closes; one fails, it opens again.' }),
}, { additionalProperties: false, description: 'A circuit breaker per target: failing or slow targets get no traffic for a while (off when absent).' })

export type CircuitBreakerConfig = Static<typeof CircuitBreakerSchema>

/**
 * What the schema cannot say about a breaker (`at` is its path below the service block): it needs a rule that can
 * open it, and an open time it can double into.
 */
export function circuitBreakerProblems (breaker: CircuitBreakerConfig | undefined, at: string): ServiceSettingProblem[] {
  if (breaker === undefined) return []
  const problems: ServiceSettingProblem[] = []
  if (breaker.consecutive_failures === undefined && breaker.failure_rate === undefined && breaker.slow === undefined) {
    problems.push({ path: at, message: 'needs a rule that opens it: consecutive_failures, failure_rate or slow' })
  }
  if (breaker.max_open_seconds < breaker.open_seconds) {
    problems.push({ path: `${at}.max_open_seconds`, message: `must be at least open_seconds (${breaker.open_seconds})` })
  }
  return problems
}
