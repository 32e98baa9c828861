import { GatewayError } from '../plugin/gateway-error.js'
import { bearerChallenge, defaultRealm } from '../plugin/bearer-challenge.js'

export { bearerChallenge, defaultRealm, type BearerChallengeParams, type BearerErrorCode } from '../plugin/bearer-challenge.js'

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
