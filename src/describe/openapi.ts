import { catalogue, isErrorCode, type CatalogueEntry } from '../plugin/catalogue.js'
import { renderError } from '../errors/envelopes.js'
import type { EnvelopeName } from '../plugin/envelope-name.js'
import { declaredError, GatewayError } from '../plugin/gateway-error.js'
import type { GatewayConfig } from '../config/types.js'
import { issuerUrl, TOKEN_PATH } from '../oauth/metadata.js'
import type { Catalog } from '../pipeline/registry.js'
import { servedRoutes, type ServedRoute } from './route-table.js'

type Json = Record<string, unknown>

/** Body shapes of the error envelopes (src/errors/envelopes.ts), as OpenAPI component schemas. */
const envelopeSchemas: Record<string, Json> = {
  'error-oauth': {
    type: 'object',
    description: 'RFC 6749 §5.2 error: {error, error_description}.',
    required: ['error'],
    properties: { error: { type: 'string' }, error_description: { type: 'string' } },
  },
  'error-payments': {
    type: 'object',
    description: 'Payments error: {success: false, message, ...fields}.',
    required: ['success', 'message'],
    properties: { success: { const: false }, message: { type: 'string' } },
  },
  'error-payments-rate-limited': {
    type: 'object',
    description: 'The payments 429: {error: "Too many requests", retry_after}.',
    required: ['error', 'retry_after'],
    properties: { error: { type: 'string' }, retry_after: { type: 'integer', minimum: 1 } },
  },
  'error-plain': {
    type: 'object',
    description: 'Plain error: {error: <fixed text>} for authentication errors, {error: <code>, ...fields, message} otherwise.',
    required: ['error'],
    properties: { error: { type: 'string' }, message: { type: 'string' } },
  },
  'error-exchange': {
    type: 'object',
    description: 'Data-exchange error: {error: <code>, ...fields, message}; authentication errors keep the plain {error: <fixed text>}.',
    required: ['error'],
    properties: { error: { type: 'string' }, message: { type: 'string' } },
  },
}

const PARAM = /:([A-Za-z0-9_]+)|\*/g

/** fastify `:param` and `*` → OpenAPI `{param}` and `{path}`. */
export function openApiPath (path: string): string {
  return path.replace(PARAM, (_m, name: string | undefined) => `{${name ?? 'path'}}`)
}

/**
 * The OpenAPI 3.1 document of what a config serves, generated from the route declarations and chains: an oauth2
 * client-credentials scheme with every scope, each operation's required scopes (its `scope` policies), error
 * responses per envelope with catalogue examples, and the request bodies the gateway knows.
 */
export function openApiDocument (config: GatewayConfig, catalog: Catalog, version: number): Json {
  const paths: Record<string, Record<string, Json>> = {}
  for (const row of servedRoutes(config, catalog)) {
    const item = paths[openApiPath(row.path)] ??= {}
    const methods = row.methods.filter((m) => m !== 'HEAD')
    for (const method of methods) {
      item[method.toLowerCase()] = row.chain.length === 0 && row.declaration === undefined
        ? gatewayOperation(row, config)
        : serviceOperation(row, method, methods.length > 1)
    }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'lanegate',
      version: String(version),
      description: `The APIs this gateway serves, generated from its route declarations and gateway.yaml (config version ${version}).`,
    },
    paths,
    components: {
      securitySchemes: {
        oauth2: {
          type: 'oauth2',
          description: 'OAuth 2.0 client credentials: POST the client id and secret to the token URL, send the token as `Authorization: Bearer`.',
          flows: {
            clientCredentials: {
              tokenUrl: issuerUrl(config.issuer.issuer, TOKEN_PATH),
              scopes: Object.fromEntries(Object.entries(config.scopes).map(([name, s]) => [name, s.description])),
            },
          },
        },
        clientBasic: { type: 'http', scheme: 'basic', description: 'Client id and secret at the token endpoint (client_secret_basic).' },
      },
      schemas: envelopeSchemas,
    },
  }
}

/** One method of a route; `several`: the route serves more than one (its operation ids then name the method). */
function serviceOperation (row: ServedRoute, method: string, several: boolean): Json {
  const operation: Json = {
    operationId: `${row.service}.${row.routeId}${several ? `.${method.toLowerCase()}` : ''}`,
    tags: [row.service],
    summary: row.description,
  }
  const parameters = pathParameters(row.path)
  if (parameters.length > 0) operation.parameters = parameters
  operation.security = securityOf(row)
  const body = typeof row.declaration?.body === 'function' && row.settings !== undefined ? row.declaration.body(row.settings) : row.declaration?.body
  const validated = validatedBody(row)
  if (body !== undefined && typeof body !== 'function') {
    operation.requestBody = { required: true, content: { 'application/json': { schema: body } } }
  } else if (validated !== undefined && method !== 'GET' && method !== 'HEAD') {
    // A relayed route that declares its JSON shape (request-validation's body schema): what callers must send.
    operation.requestBody = { required: true, description: 'Checked against the route\'s request-validation schema before it is relayed.', content: { 'application/json': { schema: validated } } }
  } else if (row.declaration?.rawBody === true && method !== 'GET') {
    operation.requestBody = { required: false, description: 'Relayed upstream as it is (streamed, never parsed).', content: { '*/*': { schema: {} } } }
  }
  operation.responses = { '2XX': { description: 'Success.' }, ...errorResponses(row) }
  if (row.websocket !== undefined && method === 'GET') {
    // The route upgrades: the chain runs on the upgrade request, refusals are the responses listed (docs/websocket.md).
    operation['x-websocket'] = { ...row.websocket, access_token_query: true }
    operation.responses = { 101: { description: 'Switching Protocols: upgraded to a WebSocket relayed to the upstream (docs/websocket.md). The token may also come as the access_token query parameter.' }, ...operation.responses as Json }
  }
  return operation
}

/** The body schema a `request-validation` step of the route's chain declares, if any. */
function validatedBody (row: ServedRoute): Json | undefined {
  for (const link of row.chain) {
    const body = link.policy === 'request-validation' ? (link.options as { body?: unknown } | undefined)?.body : undefined
    if (typeof body === 'object' && body !== null) return body as Json
  }
  return undefined
}

function pathParameters (path: string): Json[] {
  return [...path.matchAll(PARAM)].map((m) => m[1] === undefined
    ? { name: 'path', in: 'path', required: true, schema: { type: 'string' }, description: 'The rest of the path (fastify wildcard `*`), slashes included.' }
    : { name: m[1], in: 'path', required: true, schema: { type: 'string' } })
}

/** OR of the route's `any` scopes, each with all of its `all` scopes; `[]` (public) without `auth`. */
function securityOf (row: ServedRoute): Json[] {
  if (!row.chain.some((l) => l.policy === 'auth')) return []
  const all = new Set<string>()
  let anyOf: string[][] = []
  for (const link of row.chain.filter((l) => l.policy === 'scope')) {
    const options = link.options as { all?: string[], any?: string[] }
    for (const name of options.all ?? []) all.add(name)
    if (options.any !== undefined) anyOf = anyOf.length === 0 ? options.any.map((s) => [s]) : anyOf.flatMap((a) => options.any!.map((s) => [...a, s]))
  }
  if (anyOf.length === 0) return [{ oauth2: [...all] }]
  return anyOf.map((alternative) => ({ oauth2: [...new Set([...all, ...alternative])] }))
}

/** Every code the route may refuse with (its chain's policies, then its handler's), grouped by status. */
function errorResponses (row: ServedRoute): Record<string, Json> {
  const entries = new Map<string, CatalogueEntry>()
  for (const link of row.chain) {
    const plugin = link.plugin
    if (plugin === undefined) continue
    for (const [code, declared] of Object.entries((plugin.errors ?? {}) as Record<string, { status: number, message: string }>)) {
      entries.set(code, { status: declared.status, message: declared.message, shape: 'code' })
    }
    for (const code of plugin.refusals?.(link.options) ?? []) {
      if (isErrorCode(code)) entries.set(code, catalogue[code])
    }
  }
  for (const code of row.declaration?.errors ?? []) if (isErrorCode(code)) entries.set(code, catalogue[code])
  const byStatus = new Map<number, [string, CatalogueEntry][]>()
  for (const [code, entry] of entries) byStatus.set(entry.status, [...(byStatus.get(entry.status) ?? []), [code, entry]])
  const responses: Record<string, Json> = {}
  for (const status of [...byStatus.keys()].sort((a, b) => a - b)) {
    const codes = byStatus.get(status) ?? []
    responses[String(status)] = {
      description: codes.map(([code, entry]) => `${code}: ${entry.message}`).join(' | '),
      content: {
        'application/json': {
          schema: { $ref: `#/components/schemas/${schemaName(row.envelope, status)}` },
          examples: Object.fromEntries(codes.map(([code, entry]) => [code, { value: example(code, entry, row.envelope) }])),
        },
      },
    }
  }
  return responses
}

function schemaName (envelope: EnvelopeName, status: number): string {
  return envelope === 'payments' && status === 429 ? 'error-payments-rate-limited' : `error-${envelope}`
}

/** The body the envelope renders for the code with its default message (what docs/errors.md shows). */
function example (code: string, entry: CatalogueEntry, envelope: EnvelopeName): unknown {
  const fields = code === 'too_many_requests' ? { retry_after: 30 } : {}
  const error = isErrorCode(code) ? new GatewayError(code, { fields }) : declaredError(code, entry, { fields })
  return renderError(error, envelope)
}

const tokenResponse = {
  type: 'object',
  required: ['access_token', 'token_type', 'expires_in'],
  properties: {
    access_token: { type: 'string', description: 'A signed JWT.' },
    token_type: { const: 'Bearer' },
    expires_in: { type: 'integer', description: 'Seconds.' },
    scope: { type: 'string', description: 'The granted scopes, space-separated.' },
  },
}

/** The gateway's own endpoints (token, metadata, JWKS, health, this document). */
function gatewayOperation (row: ServedRoute, config: GatewayConfig): Json {
  const base: Json = { operationId: `${row.service}.${row.routeId}`, tags: [row.service], summary: row.description, security: [] }
  if (row.routeId !== 'token') return { ...base, responses: { 200: { description: 'Success.', content: { 'application/json': { schema: { type: 'object' } } } } } }
  const oauthError = (codes: string[]): Json => ({
    description: codes.join(' | '),
    content: { 'application/json': { schema: { $ref: '#/components/schemas/error-oauth' }, examples: Object.fromEntries(codes.map((c) => [c, { value: example(c, catalogue[c as keyof typeof catalogue], 'oauth') }])) } },
  })
  return {
    ...base,
    security: [{ clientBasic: [] }, {}],
    requestBody: {
      required: true,
      content: {
        'application/x-www-form-urlencoded': {
          schema: {
            type: 'object',
            required: ['grant_type'],
            properties: {
              grant_type: { const: 'client_credentials' },
              scope: { type: 'string', description: `Space-separated scopes (default: all of the client's). Known: ${Object.keys(config.scopes).join(' ')}.` },
              client_id: { type: 'string', description: 'With client_secret, instead of HTTP Basic (client_secret_post).' },
              client_secret: { type: 'string' },
            },
          },
        },
      },
    },
    responses: {
      200: { description: 'An access token.', content: { 'application/json': { schema: tokenResponse } } },
      400: oauthError(['invalid_request', 'unsupported_grant_type', 'invalid_scope']),
      401: oauthError(['invalid_client']),
      429: oauthError(['rate_limit_exceeded']),
    },
  }
}
