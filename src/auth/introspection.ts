import type { FastifyBaseLogger } from 'fastify'
import { GatewayError } from '../plugin/gateway-error.js'
import { invalidToken } from './bearer-challenge.js'
import { issuerWarning } from './issuer-warning.js'
import type { Principal } from '../runtime/request-context.js'
import { principalFromMappedClaims, type ClaimMapping } from './claim-mapping.js'
import type { IntrospectionRules } from './introspection-rules.js'

/** What an introspection answer must name: the entry's issuer and audience. */
export interface IntrospectionTarget {
  readonly issuer: string
  readonly audience: string
}

export type Introspect = (token: string, profile: IntrospectionTarget, rules: IntrospectionRules, mapping: ClaimMapping, toleranceSeconds: number) => Promise<Principal>

/**
 * Checks an opaque token with its issuer's introspection endpoint (RFC 7662) and maps the answer to the caller
 * like a JWT's claims. An inactive token, or an active one of another issuer or audience, is a 401; an endpoint
 * that fails, times out or answers something that is not an RFC 7662 answer is a 503 `auth_unavailable`: the
 * token is never let through unchecked. The token is sent only to the endpoint, never logged. The verifier caches
 * the result by the token's digest for at most `cache_seconds` (and never past its `exp`).
 */
export function introspector (logger: FastifyBaseLogger): Introspect {
  const warn = issuerWarning(logger, 'token introspection failed: opaque tokens of this issuer get 503 auth_unavailable')

  return async function introspect (token, profile, rules, mapping, toleranceSeconds) {
    const answer = await ask(token, rules).catch((error: unknown) => {
      warn(profile.issuer, { url: rules.url, reason: error instanceof Error ? error.message : String(error) })
      throw new GatewayError('auth_unavailable', { cause: error })
    })
    if (answer.active !== true) throw invalidToken('The access token is not active')
    if (answer.iss !== undefined && answer.iss !== profile.issuer) throw invalidToken('The access token is invalid', new Error('introspection names another issuer'))
    if (answer.aud !== undefined && !audiences(answer.aud).includes(profile.audience)) throw invalidToken('The access token is invalid', new Error('introspection names another audience'))
    const now = Date.now() / 1000
    if (answer.exp !== undefined && (typeof answer.exp !== 'number' || answer.exp + toleranceSeconds <= now)) throw invalidToken('The access token expired')
    // An answer without exp (it is optional in RFC 7662) lives as long as it is cached, then is asked again.
    const claims = answer.exp === undefined ? { ...answer, exp: Math.floor(now + rules.cacheMs / 1000) } : answer
    return principalFromMappedClaims(claims, mapping, profile.issuer)
  }
}

async function ask (token: string, rules: IntrospectionRules): Promise<Record<string, unknown>> {
  const res = await fetch(rules.url, {
    method: 'POST',
    headers: { authorization: rules.authorization, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams({ token, token_type_hint: 'access_token' }).toString(),
    signal: AbortSignal.timeout(rules.timeoutMs),
    redirect: 'error',
  })
  if (res.status !== 200) {
    await res.body?.cancel()
    throw new Error(`the introspection endpoint answered ${res.status}`)
  }
  const body: unknown = await res.json()
  if (typeof body !== 'object' || body === null || Array.isArray(body) || typeof (body as { active?: unknown }).active !== 'boolean') {
    throw new Error('the introspection endpoint answered without a boolean "active"')
  }
  return body as Record<string, unknown>
}

function audiences (aud: unknown): unknown[] {
  return Array.isArray(aud) ? aud : [aud]
}
