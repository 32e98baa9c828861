import { RESPONSE_BODY_LIMIT, Type, type Static } from '../../src/plugin/index.js'
import { StringEnum } from '../string-enum.js'

export const cacheSchema = Type.Object({
  ttl_seconds: Type.Integer({ minimum: 1, maximum: 86_400, description: 'Longest time an answer is served from the cache; a shorter backend max-age / s-maxage wins.' }),
  max_entry_bytes: Type.Integer({ minimum: 1, maximum: RESPONSE_BODY_LIMIT, default: RESPONSE_BODY_LIMIT, description: 'Largest body cached (bytes, at most 65536); larger answers are passed on and not kept.' }),
  vary: Type.Array(Type.String({ pattern: '^[!#$%&\'*+.^_`|~0-9A-Za-z-]+$', description: 'A request header name.' }), {
    default: [],
    uniqueItems: true,
    description: 'Request headers whose values select different cached answers (beside those the backend names in Vary).',
  }),
  by: StringEnum(['client', 'organization', 'none'] as const, {
    default: 'client',
    description: 'Who shares an entry: each client id (default), each organization, or every caller the chain let through.',
  }),
}, {
  description: 'Answers GET and HEAD from memory while fresh, honouring the backend\'s Cache-Control and Vary; put it last in the chain.',
  additionalProperties: false,
})

/** Options of the `cache` policy. */
export type CacheOptions = Static<typeof cacheSchema>
