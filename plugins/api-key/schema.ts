import { Type, type Static } from '../../src/plugin/index.js'
import { StringEnum } from '../string-enum.js'

/** An HTTP header name (RFC 9110 token). */
const HEADER_NAME = '^[!#$%&\'*+.^_`|~0-9A-Za-z-]+$'

export const apiKeySchema = Type.Object({
  header: Type.Optional(Type.String({
    description: 'Request header carrying the key. Default X-Api-Key when `query` is not given either.',
    pattern: HEADER_NAME,
    maxLength: 100,
  })),
  // Only names the request log redacts (src/logging/logger.ts): the URL is logged before the chain removes the key.
  query: Type.Optional(StringEnum(['api_key', 'apikey', 'api-key', 'key'], {
    description: 'Query parameter carrying the key, for callers that cannot set a header (one of the names the request log redacts). Keys in URLs end up in browser histories and foreign logs: prefer the header.',
  })),
  bearer: Type.Boolean({
    description: 'Also accept a bearer token (Authorization: Bearer …) instead of a key, verified as `auth` verifies it. A request carrying both is a 400.',
    default: false,
  }),
}, {
  description: 'Requires an API key of a service account (service_accounts[].api_keys) and records that account as the caller, as its token would.',
  additionalProperties: false,
})

/** Options of the `api-key` policy (defaults filled by the loader). */
export type ApiKeyOptions = Static<typeof apiKeySchema>
