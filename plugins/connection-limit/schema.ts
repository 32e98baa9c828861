import { Type, type Static } from '../../src/plugin/index.js'
import { StringEnum } from '../string-enum.js'

export const connectionLimitSchema = Type.Object({
  key: StringEnum(['client', 'ip'] as const, { description: 'What the open connections are counted by: the caller\'s client id (needs `auth` earlier in the chain) or its IP address.' }),
  max: Type.Integer({ minimum: 1, maximum: 1000000, description: 'Connections (WebSockets and in-flight responses, event streams included) one key may have open on the route at once; the next gets 429 before any upgrade.' }),
}, {
  description: 'Bounds the connections open at once per client or IP on the route; over it, 429 too_many_requests.',
  additionalProperties: false,
})

/** Options of the `connection-limit` policy. */
export type ConnectionLimitOptions = Static<typeof connectionLimitSchema>
