import type { FastifyReply, FastifyRequest } from 'fastify'
import type { GatewayConfig } from '../config/types.js'

/** Paths the OAuth plugin serves, relative to the issuer URL. */
export const TOKEN_PATH = '/oauth/token'
export const METADATA_PATH = '/.well-known/oauth-authorization-server'
export const JWKS_PATH = '/.well-known/jwks.json'

/** A URL below the issuer (`issuer.issuer` without its trailing slash, then `path`). */
export function issuerUrl (issuer: string, path: string): string {
  return issuer.replace(/\/+$/, '') + path
}

/**
 * RFC 8414 authorization server metadata. `issuer` is exactly the `iss` of issued tokens; the fields whose
 * defaults would be wrong for this server (`grant_types_supported` defaults to authorization_code and implicit)
 * are listed explicitly (RELIABILITY C4). There is no authorization endpoint, so no response type.
 */
export function authorizationServerMetadata (config: GatewayConfig): Record<string, unknown> {
  const issuer = config.issuer.issuer
  return {
    issuer,
    token_endpoint: issuerUrl(issuer, TOKEN_PATH),
    jwks_uri: issuerUrl(issuer, JWKS_PATH),
    grant_types_supported: ['client_credentials'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    scopes_supported: Object.keys(config.scopes),
    response_types_supported: [],
  }
}

/** Metadata changes only with the config. */
const METADATA_CACHE = 'public, max-age=300'
/** The JWKS may be cached briefly; the key activation delay (key-store.ts) allows for this minute. */
const JWKS_CACHE = 'public, max-age=60'

export async function metadataHandler (request: FastifyRequest, reply: FastifyReply): Promise<Record<string, unknown>> {
  reply.header('cache-control', METADATA_CACHE)
  return authorizationServerMetadata(request.gw.snapshot.config)
}

export function createJwksHandler (jwks: () => { keys: unknown[] }) {
  return async function jwksHandler (_request: FastifyRequest, reply: FastifyReply): Promise<{ keys: unknown[] }> {
    reply.header('cache-control', JWKS_CACHE)
    return jwks()
  }
}
