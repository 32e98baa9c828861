/** Options of the `token-type` policy. */
export interface TokenTypeOptions {
  /** The token types this route accepts. */
  allow: Array<'service' | 'user'>
}

export const tokenTypeSchema = {
  type: 'object',
  description: 'Accepts only the listed token types; any other type is a 401 invalid_token_type.',
  additionalProperties: false,
  required: ['allow'],
  properties: {
    allow: {
      type: 'array',
      description: 'Token types accepted: "service" (issued by this gateway to service accounts) and/or "user" (from a trusted user_token_issuers entry).',
      minItems: 1,
      uniqueItems: true,
      items: { type: 'string', enum: ['service', 'user'], description: 'A token type.' },
    },
  },
} as const
