/** Options of the `scope` policy. */
export interface ScopeOptions {
  /** The token must carry every one of these scopes. */
  all?: string[]
  /** The token must carry at least one of these scopes. */
  any?: string[]
}

const scopeList = {
  type: 'array',
  minItems: 1,
  uniqueItems: true,
  items: { type: 'string', minLength: 1, pattern: '^[\\x21\\x23-\\x5b\\x5d-\\x7e]+$', description: 'A scope name listed under `scopes:`.' },
} as const

export const scopeSchema = {
  type: 'object',
  description: 'Requires scopes on the caller\'s token; a missing scope is a 403 insufficient_scope.',
  additionalProperties: false,
  // At least one of all/any (the only two properties allowed).
  minProperties: 1,
  properties: {
    all: { ...scopeList, description: 'Scopes the token must all carry.' },
    any: { ...scopeList, description: 'Scopes of which the token must carry at least one.' },
  },
} as const
