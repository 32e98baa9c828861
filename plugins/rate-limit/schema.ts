/** Options of the `rate-limit` policy. */
export interface RateLimitOptions {
  /** Name of a limit under `rate_limits:`. */
  limit: string
}

export const rateLimitSchema = {
  type: 'object',
  description: 'Counts the request against a named limit; over it, 429 with Retry-After.',
  additionalProperties: false,
  required: ['limit'],
  properties: {
    limit: {
      type: 'string',
      minLength: 1,
      description: 'Name of a limit under rate_limits. Routes naming the same limit share its counters.',
    },
  },
} as const
