import type { FastifyReply, FastifyRequest } from 'fastify'
import {
  bearerChallenge, defaultRealm, definePolicy, isRefusal, type PolicyContext, type Principal, type Refusal, type RefuseOptions, type StepOutcome,
} from '../../src/plugin/index.js'
import { tokenSlotOf } from '../token-slot-of.js'
import { keySlotOf } from './key-slot.js'
import { removeQueryParameter } from './strip-query.js'
import { apiKeySchema } from './schema.js'

type KeyOutcome = Principal | 'invalid' | 'revoked' | 'busy'

/** `<scheme> <credentials>`; the scheme is compared case-insensitively (RFC 9110 §11.1). */
const credentialsHeader = /^([^ \t]+)(?:[ \t]+(.*))?$/

/**
 * `api-key`: for callers that cannot do OAuth (legacy tills, scripts). The key, from a header or a query parameter,
 * is checked against the scrypt hashes under `service_accounts[].api_keys` (a verified key is cached by digest:
 * no scrypt per request; the last key accepted on a connection is remembered there, so a keep-alive caller's next
 * request costs a constant-time comparison, not a digest) and gives the same principal as that account's token,
 * so `scope`, `organization` and client-keyed `rate-limit` work unchanged after it (`provides: ['auth']`). The key
 * is removed from the request before anything later sees it (handlers, the upstream, the live lanes) and never
 * logged. With `bearer: true` a request may bring a bearer token instead, verified as `auth` verifies it.
 */
const apiKey = definePolicy({
  name: 'api-key',
  description: 'Requires an API key of a service account (or, with bearer: true, a bearer token) and records the caller.',
  schema: apiKeySchema,
  provides: ['auth'],
  summarize: (options) => `API key in ${where(options).join(' or ')}${options.bearer ? ', or a bearer token' : ''}`,
  refusals: () => ['unauthenticated', 'bad_request', 'service_unavailable'],
  explain (options, request) {
    const caller = request.caller
    if (caller === undefined) return { outcome: 'refuse', status: 401, code: 'unauthenticated', note: `no API key (no caller named): expects ${where(options).join(' or ')}` }
    if (caller.tokenType === 'service' && request.settings.accountStatus(caller.clientId) !== 'active') {
      return { outcome: 'refuse', status: 401, code: 'unauthenticated', note: `service account ${caller.clientId} is not active: its keys are refused` }
    }
    return { outcome: 'pass', note: `a valid API key of ${caller.clientId} (organization ${caller.organizationId})` }
  },
  create (options, context) {
    const [header, query] = sources(options)
    const keyChallenge = `ApiKey realm="${defaultRealm}"`
    const challenge = options.bearer ? `${keyChallenge}, ${bearerChallenge(defaultRealm)}` : keyChallenge
    const missing: RefuseOptions = { headers: { 'WWW-Authenticate': challenge } }
    const wrong: RefuseOptions = { headers: { 'WWW-Authenticate': `${keyChallenge}, error="invalid_key"` } }
    const revoked: RefuseOptions = { headers: { 'WWW-Authenticate': `${keyChallenge}, error="invalid_key", error_description="The client has been revoked"` } }
    const busy: RefuseOptions = { headers: { 'Retry-After': '1' }, message: 'Too many new API keys are being checked at once; retry shortly.' }
    const twice: RefuseOptions = { message: 'Send the API key once.' }
    const both: RefuseOptions = { message: 'Send either an API key or a bearer token, not both.' }

    function settle (request: FastifyRequest, outcome: KeyOutcome): StepOutcome {
      if (outcome === 'invalid') return context.refuse('unauthenticated', wrong)
      if (outcome === 'revoked') return context.refuse('unauthenticated', revoked)
      if (outcome === 'busy') return context.refuse('service_unavailable', busy)
      context.setPrincipal(request, outcome)
    }

    return function apiKeyStep (request: FastifyRequest, _reply: FastifyReply): StepOutcome | Promise<StepOutcome> {
      const presented = takeKey(request, header, query)
      if (presented === null) return context.refuse('bad_request', twice)
      const authorization = options.bearer ? request.headers.authorization : undefined
      if (presented === undefined) {
        if (authorization === undefined) return context.refuse('unauthenticated', missing)
        return verifyBearer(request, authorization, context, missing)
      }
      if (authorization !== undefined) return context.refuse('bad_request', both)
      const outcome = context.apiKeys.verify(presented, keySlotOf(request))
      if (!(outcome instanceof Promise)) return settle(request, outcome)
      return outcome.then(function keyChecked (checked) { return settle(request, checked) })
    }
  },
})

/** The header (lower-cased) and query parameter the key may come in; the header X-Api-Key when neither is set. */
function sources (options: { header?: string | undefined, query?: string | undefined }): [string | undefined, string | undefined] {
  if (options.header === undefined && options.query === undefined) return ['x-api-key', undefined]
  return [options.header?.toLowerCase(), options.query]
}

function where (options: { header?: string | undefined, query?: string | undefined }): string[] {
  const [header, query] = sources(options)
  return [header && `header ${options.header ?? 'X-Api-Key'}`, query && `query ${query}`].filter((s): s is string => typeof s === 'string')
}

/**
 * The presented key, removed from the request (header, raw URL and parsed query) so that no later step,
 * handler, upstream or lane sees it; null when it came more than once (two query values, or header and query).
 */
function takeKey (request: FastifyRequest, header: string | undefined, query: string | undefined): string | undefined | null {
  let key: string | undefined
  let count = 0
  if (header !== undefined) {
    const value = request.raw.headers[header]
    if (typeof value === 'string') {
      key = value.trim()
      count++
      delete request.raw.headers[header]
    }
  }
  if (query !== undefined) {
    const parsed = request.query as Record<string, unknown> | undefined
    const value = parsed?.[query]
    if (value !== undefined) {
      count += Array.isArray(value) ? value.length : 1
      key = Array.isArray(value) ? undefined : String(value)
      delete parsed?.[query]
      request.raw.url = removeQueryParameter(request.raw.url ?? '', query)
    }
  }
  return count > 1 ? null : key
}

/** With `bearer: true` and no key: the bearer token verified as `auth` verifies it (default realm). */
function verifyBearer (request: FastifyRequest, authorization: string, context: PolicyContext, missing: RefuseOptions): StepOutcome | Promise<StepOutcome> {
  const match = credentialsHeader.exec(authorization)
  const token = match?.[2]?.trim() ?? ''
  if (match === null || match[1]?.toLowerCase() !== 'bearer' || token === '') return context.refuse('unauthenticated', missing)
  let verified: Principal | Promise<Principal>
  try {
    verified = context.tokens.verify(token, tokenSlotOf(request))
  } catch (error) {
    return refusal(error)
  }
  if (!(verified instanceof Promise)) {
    context.setPrincipal(request, verified)
    return
  }
  return verified.then(
    function verifiedToken (principal) { context.setPrincipal(request, principal) },
    refusal,
  )
}

/** A refusal the verifier threw is the step's refusal; anything else (a bug) is thrown on to become a 500. */
function refusal (error: unknown): Refusal {
  if (isRefusal(error)) return error
  throw error
}

export default apiKey
