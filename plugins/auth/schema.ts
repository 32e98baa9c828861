import { Type, defaultRealm, type Static } from '../../src/plugin/index.js'

export const authSchema = Type.Object({
  realm: Type.String({
    description: 'Realm named in the WWW-Authenticate challenge of 401 responses. Default "lanegate".',
    pattern: '^[\\x20-\\x7e]+$',
    minLength: 1,
    maxLength: 100,
    default: defaultRealm,
  }),
}, {
  description: 'Requires a valid bearer token in the Authorization header and records the caller (its principal).',
  additionalProperties: false,
})

/** Options of the `auth` policy (defaults filled by the loader). */
export type AuthOptions = Static<typeof authSchema>
