import { Type, type Static } from '../../src/plugin/index.js'
import { StringEnum } from '../string-enum.js'

export const tokenTypeSchema = Type.Object({
  allow: Type.Array(StringEnum(['service', 'user'] as const, { description: 'A token type.' }), {
    description: 'Token types accepted: "service" (issued by this gateway to service accounts) and/or "user" (from a trusted user_token_issuers entry).',
    minItems: 1,
    uniqueItems: true,
  }),
}, {
  description: 'Accepts only the listed token types; any other type is a 401 invalid_token_type.',
  additionalProperties: false,
})

/** Options of the `token-type` policy. */
export type TokenTypeOptions = Static<typeof tokenTypeSchema>
