import { Type, type Static } from '../../src/plugin/index.js'

const NAME = '^[A-Za-z0-9!#$%&\'*+.^_`|~-]+$'
const changes = (what: string) => Type.Object({
  set: Type.Optional(Type.Record(Type.String({ pattern: NAME }), Type.String({ pattern: '^[\\x20-\\x7e\\t]*$', description: 'The value (printable ASCII).' }), {
    description: `Headers set on the ${what} (replacing any value), by name.`,
  })),
  remove: Type.Optional(Type.Array(Type.String({ pattern: NAME, description: 'A header name.' }), { uniqueItems: true, description: `Headers removed from the ${what}.` })),
}, { additionalProperties: false, description: `Changes to the ${what}'s headers.` })

export const headersSchema = Type.Object({
  request: Type.Optional(changes('request (before the handler, or the upstream, sees it)')),
  response: Type.Optional(changes('response (after the handler, or the upstream, answered)')),
}, {
  description: 'Sets and removes request headers before the handler and response headers after it.',
  additionalProperties: false,
  minProperties: 1,
})

/** Options of the `headers` policy. */
export type HeadersOptions = Static<typeof headersSchema>
