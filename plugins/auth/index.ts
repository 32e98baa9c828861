import type { FastifyReply, FastifyRequest } from 'fastify'
import {
  bearerChallenge, defaultRealm, definePolicy, isRefusal, type ErrorCode, type PolicyContext, type Principal, type Refusal, type StepOutcome,
} from '../../src/plugin/index.js'
import { tokenSlotOf } from '../token-slot-of.js'
import { authSchema } from './schema.js'

/** `<scheme> <credentials>`; the scheme is compared case-insensitively (RFC 9110 §11.1). */
const credentialsHeader = /^([^ \t]+)(?:[ \t]+(.*))?$/

/**
 * `auth`: verifies the bearer token of the `Authorization` header and sets the request's caller (`context.setPrincipal`).
 * Only the header is read: a token in the query string or body is ignored (RFC 6750 §2.3 is not offered), and a
 * header token together with a query token is a 400 because a client must use one method only (B13).
 * The exception is a route that may be upgraded to a WebSocket (`context.websocket`): a browser cannot set
 * `Authorization` on a WebSocket (nor on an EventSource), so there the token may come as the `access_token` query
 * parameter instead (RFC 6750 §2.3); both at once is still a 400. The relay removes it before going upstream, and
 * the logger redacts it.
 */
const auth = definePolicy({
  name: 'auth',
  description: 'Requires a valid bearer token (the gateway\'s service tokens or a trusted issuer\'s user tokens).',
  // Reads only the request, the caller and the config: run again on the route's open WebSockets after a reload.
  recheck: true,
  schema: authSchema,
  summarize: (options) => options.realm === defaultRealm ? 'bearer token' : `bearer token (realm ${options.realm})`,
  refusals: () => ['unauthenticated', 'bad_request', 'auth_unavailable'],
  explain (_options, request) {
    const caller = request.caller
    if (caller === undefined) return { outcome: 'refuse', status: 401, code: 'unauthenticated', note: 'no bearer token (no caller named)' }
    // Only the gateway's own service tokens have an account; an outside issuer's are its clients.
    if (caller.tokenType === 'service' && caller.issuer === request.settings.issuer && request.settings.accountStatus(caller.clientId) !== 'active') {
      return { outcome: 'refuse', status: 401, code: 'unauthenticated', note: `service account ${caller.clientId} is not active: its tokens are refused` }
    }
    return { outcome: 'pass', note: `a valid ${caller.tokenType} token of ${caller.clientId} (organization ${caller.organizationId})` }
  },
  create (options, context) {
    const realm = options.realm
    const verifier = context.tokens
    // No header, `Basic …`, another scheme or a bare `Bearer`: no credentials this API accepts, so the challenge
    // carries no `error` parameter (RFC 6750 §3.1).
    const missingCredentials = { headers: { 'WWW-Authenticate': bearerChallenge(realm) } }
    const queryTokenAllowed = context.websocket === true
    return function authStep (request: FastifyRequest, _reply: FastifyReply): StepOutcome | Promise<StepOutcome> {
      let token = bearerToken(request.headers.authorization)
      if (queryTokenAllowed && hasQueryToken(request)) {
        if (request.headers.authorization !== undefined) {
          return context.refuse('bad_request', { message: 'Send the access token one way only: the Authorization header or the access_token parameter.' })
        }
        token = queryToken(request)
        if (token === undefined) return context.refuse('bad_request', { message: 'Send one access_token parameter.' })
      }
      if (token === undefined) return context.refuse('unauthenticated', missingCredentials)
      if (!queryTokenAllowed && hasQueryToken(request)) {
        return context.refuse('bad_request', { message: 'Send the access token in the Authorization header only.' })
      }
      // The verifier checks the RFC 6750 b64token syntax before it first verifies a token (not on a cache hit).
      let verified: Principal | Promise<Principal>
      try {
        verified = verifier.verify(token, tokenSlotOf(request))
      } catch (error) {
        return refusal(withRealm(error, realm, context))
      }
      // A cached token answers synchronously: the chain goes on without a promise.
      if (!(verified instanceof Promise)) {
        context.setPrincipal(request, verified)
        return
      }
      return verified.then(
        function verifiedToken (principal) { context.setPrincipal(request, principal) },
        function rejectedToken (error) { return refusal(withRealm(error, realm, context)) },
      )
    }
  },
})

/** The token of a `Bearer <token>` header value, or undefined for anything else. */
function bearerToken (header: string | undefined): string | undefined {
  if (header === undefined) return undefined
  // The common exact shape first: no regex, no lower-casing.
  if (header.startsWith('Bearer ') && header.charCodeAt(7) > 32 && header.charCodeAt(header.length - 1) > 32) {
    return header.slice(7)
  }
  const match = credentialsHeader.exec(header)
  const token = match?.[2]?.trim() ?? ''
  return match === null || match[1]?.toLowerCase() !== 'bearer' || token === '' ? undefined : token
}

function hasQueryToken (request: FastifyRequest): boolean {
  const query = request.query
  return typeof query === 'object' && query !== null && Object.hasOwn(query, 'access_token')
}

/** The `access_token` query parameter when it is given once and not empty. */
function queryToken (request: FastifyRequest): string | undefined {
  const value = (request.query as Record<string, unknown>).access_token
  return typeof value === 'string' && value !== '' ? value : undefined
}

/** A refusal the verifier threw is the step's refusal; anything else (a bug) is thrown on to become a 500. */
function refusal (error: unknown): Refusal {
  if (isRefusal(error)) return error
  throw error
}

/** The verifier names the default realm; a route with its own realm rewrites the challenge. */
function withRealm (error: unknown, realm: string, context: PolicyContext): unknown {
  if (realm === defaultRealm || !isRefusal(error)) return error
  const challenge = error.headers['WWW-Authenticate']
  if (challenge === undefined) return error
  const realmParam = `realm="${defaultRealm}"`
  return context.refuse(error.code as ErrorCode, {
    message: error.message,
    fields: error.fields,
    headers: { ...error.headers, 'WWW-Authenticate': challenge.replace(realmParam, bearerChallenge(realm).slice('Bearer '.length)) },
  })
}

export default auth
