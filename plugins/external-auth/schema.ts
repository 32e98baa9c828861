import { Type, type Static } from '../../src/plugin/index.js'

const NAME = '^[A-Za-z0-9!#$%&\'*+.^_`|~-]+$'
const names = (description: string) => Type.Array(Type.String({ pattern: NAME, description: 'A header name (case-insensitive).' }), { uniqueItems: true, description })

export const externalAuthSchema = Type.Object({
  url: Type.String({ pattern: '^https?://', description: 'The decision service: the gateway POSTs {method, path, service, route, headers, principal} to it as JSON.' }),
  headers: Type.Optional(names('Request headers sent to the decision service (default none).')),
  timeout_ms: Type.Integer({ minimum: 10, maximum: 30000, default: 1000, description: 'How long the gateway waits for a decision before refusing with 503 auth_unavailable.' }),
  cache_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 3600, description: 'Reuse a decision (allow or deny) for the same caller, method, path and sent headers this long; default: ask every time.' })),
  add_headers: Type.Optional(names('Headers of an allowing answer set on the request before the handler or the upstream sees it.')),
}, {
  description: 'Asks an outside decision service (an entitlement service, OPA) whether the request may go on.',
  additionalProperties: false,
})

/** Options of the `external-auth` policy. */
export type ExternalAuthOptions = Static<typeof externalAuthSchema>
