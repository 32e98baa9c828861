import { Type, type Static } from '../../src/plugin/index.js'

const scopeList = (description: string) => Type.Array(
  Type.String({ minLength: 1, pattern: '^[\\x21\\x23-\\x5b\\x5d-\\x7e]+$', description: 'A scope name listed under `scopes:`.' }),
  { minItems: 1, uniqueItems: true, description },
)

export const scopeSchema = Type.Object({
  all: Type.Optional(scopeList('Scopes the token must all carry.')),
  any: Type.Optional(scopeList('Scopes of which the token must carry at least one.')),
}, {
  description: 'Requires scopes on the caller\'s token; a missing scope is a 403 insufficient_scope.',
  additionalProperties: false,
  // At least one of all/any (the only two properties allowed).
  minProperties: 1,
})

/** Options of the `scope` policy. */
export type ScopeOptions = Static<typeof scopeSchema>
