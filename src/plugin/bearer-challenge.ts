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
