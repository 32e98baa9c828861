/** Options of the `auth` policy. */
export interface AuthOptions {
  /** The realm named in `WWW-Authenticate` challenges. */
  realm?: string
}

export const authSchema = {
  type: 'object',
  description: 'Requires a valid bearer token in the Authorization header and records the caller (its principal).',
  additionalProperties: false,
  properties: {
    realm: {
      type: 'string',
      description: 'Realm named in the WWW-Authenticate challenge of 401 responses. Default "lanegate".',
      pattern: '^[\\x20-\\x7e]+$',
      minLength: 1,
      maxLength: 100,
    },
  },
} as const
