import { Type, type Static } from '../../src/plugin/index.js'

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const

export const corsSchema = Type.Object({
  origins: Type.Array(Type.String({ pattern: '^(\\*|https?://[^/\\s]+)$', description: 'An origin (scheme://host[:port]) or `*` for any.' }), {
    minItems: 1,
    uniqueItems: true,
    description: 'Origins whose browsers may call the route; `*` allows any origin (not with credentials).',
  }),
  methods: Type.Array(Type.Unsafe<typeof METHODS[number]>({ type: 'string', enum: [...METHODS], description: 'An HTTP method.' }), {
    minItems: 1,
    uniqueItems: true,
    description: 'Methods a preflight may ask for (Access-Control-Allow-Methods).',
  }),
  headers: Type.Array(Type.String({ pattern: '^[A-Za-z0-9!#$%&\'*+.^_`|~-]+$', description: 'A request header name.' }), {
    uniqueItems: true,
    default: [],
    description: 'Request headers a preflight may ask for (Access-Control-Allow-Headers), e.g. Authorization, Content-Type.',
  }),
  credentials: Type.Boolean({ default: false, description: 'Whether browsers may send cookies and Authorization (Access-Control-Allow-Credentials: true). Never with origin `*`.' }),
  max_age_seconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 86400, description: 'How long a browser may cache a preflight answer (Access-Control-Max-Age).' })),
}, {
  description: 'Cross-origin browser access: answers preflights (OPTIONS) and adds Access-Control-* headers for allowed origins.',
  additionalProperties: false,
})

/** Options of the `cors` policy (defaults filled by the loader). */
export type CorsOptions = Static<typeof corsSchema>
