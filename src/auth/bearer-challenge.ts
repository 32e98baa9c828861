import { GatewayError } from '../errors/gateway-error.js'

/** The realm the gateway names in `WWW-Authenticate` unless a route's auth policy sets another. */
export const defaultRealm = 'lanegate'

/** RFC 6750 §3 `error` values the gateway sends on API routes. */
export type BearerErrorCode = 'invalid_token' | 'insufficient_scope'

/** Parameters of one `WWW-Authenticate: Bearer` challenge beyond the realm. */
export interface BearerChallengeParams {
  error?: BearerErrorCode
  error_description?: string
  scope?: string
}

/**
 * Builds an RFC 6750 §3 challenge. Values are quoted-strings; the gateway only ever passes fixed text, but quotes
 * and backslashes are stripped anyway so a future caller cannot break the header's syntax.
 */
export function bearerChallenge (realm: string, params: BearerChallengeParams = {}): string {
  const parts = [`Bearer realm="${quoteSafe(realm)}"`]
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined) parts.push(`${name}="${quoteSafe(value)}"`)
  }
  return parts.join(', ')
}

function quoteSafe (value: string): string {
  return value.replace(/["\\\r\n]/g, '')
}

/**
 * The 401 for a request without usable credentials (no header, or a scheme other than Bearer): RFC 6750 §3.1 says
 * the challenge carries no `error` parameter then.
 */
export function missingCredentials (realm: string = defaultRealm): GatewayError {
  return new GatewayError('unauthenticated', { headers: { 'WWW-Authenticate': bearerChallenge(realm) } })
}

/**
 * The 401 for a token that was presented but is not acceptable. The description goes only into the header: the
 * body keeps the spec's fixed `Unauthenticated.` text in every envelope.
 */
export function invalidToken (description: string, cause?: unknown, realm: string = defaultRealm): GatewayError {
  return new GatewayError('unauthenticated', {
    headers: { 'WWW-Authenticate': bearerChallenge(realm, { error: 'invalid_token', error_description: description }) },
    cause,
  })
}
