import { Type, type Static } from '../../src/plugin/index.js'

export const rateLimitSchema = Type.Object({
  limit: Type.String({ minLength: 1, description: 'Name of a limit under rate_limits. Routes naming the same limit share its counters.' }),
}, {
  description: 'Counts the request against a named limit; over it, 429 with Retry-After.',
  additionalProperties: false,
})

/** Options of the `rate-limit` policy. */
export type RateLimitOptions = Static<typeof rateLimitSchema>
