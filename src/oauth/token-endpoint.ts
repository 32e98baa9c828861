import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction, RequestPayload } from 'fastify'
import type { GatewayConfig, ServiceAccountConfig } from '../config/types.js'
import { GatewayError } from '../plugin/gateway-error.js'
import { recordTokenIssued } from '../observability/recorders.js'
import { issuanceStart, recordTokenIssuance } from '../observability/tracing/token-span.js'
import type { KeyStore } from '../runtime/shared-resources.js'
import { readCredentials, type ClientAuthenticator, type ClientCredentials, type PresentedCredentials } from './client-auth.js'
import { clientSlotOf } from './client-slot.js'
import { duplicatedParameters, formValue, isFormContentType, type FormParameters } from './form-body.js'
import { createScopeGrants } from './scope-grant.js'
import type { TokenLimits } from './token-limits.js'
import { tokenLifetime } from './token-lifetime.js'
import { signFromTemplate } from './token-template.js'
import { createTokenTemplates } from './token-templates.js'

/**
 * `POST /oauth/token`, client-credentials grant only, as a list of named steps in the order docs/oauth.md gives:
 *
 *  1. noCache                 (onRequest)   Cache-Control: no-store, Pragma: no-cache on every answer
 *  2. checkContentType        (preParsing)  application/x-www-form-urlencoded, else 400 invalid_request
 *  3. parse body              (parser)      strict form parser, 16 KiB (form-body.ts)
 *  4. rejectDuplicates                      a parameter sent twice → 400 invalid_request
 *  5. locateCredentials                     Basic or body, not both; no client_secret in the query → 400
 *  6. requireParameters                     one 400 invalid_request listing every missing parameter
 *  7. checkGrantType                        only client_credentials → else 400 unsupported_grant_type
 *  8. checkFailedAuthBrake                  this IP's failed authentications → 429 before any hashing
 *  9. authenticateClient                    401 invalid_client (failures counted against the IP)
 * 10. checkClientRateLimit                  60/min per authenticated client → 429 rate_limit_exceeded
 * 11. grantScopes                           spec scope rules → 400 invalid_scope
 * 12. issueToken                            signed at+jwt; 200 token response
 */

/** Parameters this endpoint reads; any other parameter is ignored (RFC 6749 §3.2). */
const KNOWN_PARAMETERS = ['grant_type', 'client_id', 'client_secret', 'scope'] as const
const REQUIRED_PARAMETERS = ['grant_type', 'client_id', 'client_secret'] as const

export interface TokenEndpointDeps {
  keys: KeyStore
  limits: TokenLimits
  clients: ClientAuthenticator
}

/** The token response body (RFC 6749 §5.1 plus the spec's `expires_at`). */
export interface TokenResponse {
  access_token: string
  token_type: 'Bearer'
  expires_in: number
  expires_at: number
  scope: string
}

/**
 * The token response body exactly as JSON.stringify writes a TokenResponse, put together from parts that need no
 * escaping: a compact JWS is base64url and dots, the numbers print alike, and the scope comes JSON-encoded from the
 * client's token template. JSON.stringify scanned the whole token for characters to escape on every response.
 */
export function tokenResponseBody (accessToken: string, expiresIn: number, expiresAt: number, scopeJson: string): string {
  return `{"access_token":"${accessToken}","token_type":"Bearer","expires_in":${expiresIn},"expires_at":${expiresAt},"scope":${scopeJson}}`
}

/** Step 1. Token responses, errors included, must never be cached (RFC 6749 §5.1). A hook with `done`: no promise. */
export function noCache (_request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
  reply.header('cache-control', 'no-store')
  reply.header('pragma', 'no-cache')
  done()
}

/** Step 2. Runs before fastify picks a body parser, so every other content type gets the spec's 400. */
export function checkContentType (request: FastifyRequest, _reply: FastifyReply, payload: RequestPayload, done: (error: Error | null, payload?: RequestPayload) => void): void {
  if (!isFormContentType(request.headers['content-type'])) {
    done(new GatewayError('invalid_request', { message: 'Content-Type must be application/x-www-form-urlencoded.' }))
    return
  }
  done(null, payload)
}

/** Step 4. RFC 6749 §3.2: request parameters MUST NOT be included more than once. */
export function rejectDuplicates (body: FormParameters): void {
  const duplicated = duplicatedParameters(body, KNOWN_PARAMETERS)
  if (duplicated.length > 0) {
    throw new GatewayError('invalid_request', { message: `Parameters must not be sent more than once: ${duplicated.join(', ')}.` })
  }
}

/** Step 5. Credentials come from exactly one place, and never from the URL, which ends up in logs (RFC 6749 §2.3.1). */
export function locateCredentials (request: FastifyRequest, body: FormParameters): PresentedCredentials {
  const query = request.query as Record<string, unknown> | undefined
  if (query !== undefined && query !== null && Object.hasOwn(query, 'client_secret')) {
    throw new GatewayError('invalid_request', { message: 'client_secret must not be sent in the query string.' })
  }
  return readCredentials(request.headers.authorization, body)
}

/** Step 6. One error naming every missing parameter, in the spec's order. */
export function requireParameters (body: FormParameters, credentials: PresentedCredentials): ClientCredentials {
  const present: Record<(typeof REQUIRED_PARAMETERS)[number], boolean> = {
    grant_type: formValue(body, 'grant_type') !== undefined,
    client_id: credentials.clientId !== undefined,
    client_secret: credentials.clientSecret !== undefined,
  }
  const missing = REQUIRED_PARAMETERS.filter((name) => !present[name])
  if (missing.length > 0) {
    throw new GatewayError('invalid_request', { message: `Missing required parameter${missing.length > 1 ? 's' : ''}: ${missing.join(', ')}.` })
  }
  return credentials as ClientCredentials
}

/** Step 7. */
export function checkGrantType (body: FormParameters): void {
  if (formValue(body, 'grant_type') !== 'client_credentials') throw new GatewayError('unsupported_grant_type')
}

/** A step's answer: at once when it had all it needed in memory, a promise when it waited for a store or scrypt. */
type Pending<T> = T | Promise<T>

/** Runs `next` on a step's answer: at once when the answer is a value, when it settles when it is a promise. */
function andThen<S, T, R> (answer: Pending<T>, state: S, next: (state: S, value: T) => Pending<R>): Pending<R> {
  return answer instanceof Promise ? answer.then((value: T) => next(state, value)) : next(state, answer)
}

/** Step 10's answer once its count is taken: the account it was given. */
function sameAccount (account: ServiceAccountConfig): ServiceAccountConfig {
  return account
}

/** One token request as steps 8–12 see it. */
interface TokenRequest {
  readonly request: FastifyRequest
  readonly reply: FastifyReply
  readonly config: GatewayConfig
  readonly body: FormParameters
  readonly credentials: ClientCredentials
  /** When issuance began, while span export is on. */
  readonly started: number | undefined
}

/**
 * Builds the handler running steps 4–12 on the parsed body. A known client whose limits are counted in this
 * process gets its token without a promise: steps 8–11 answer synchronously then, and step 12's signature is the
 * one heavy piece of work left. A limiter store or a first-seen secret makes the step return a promise, and the
 * following steps run when it settles.
 */
export function createTokenHandler (deps: TokenEndpointDeps) {
  const templateFor = createTokenTemplates()
  const grantScopes = createScopeGrants()

  async function failedAuthentication (token: TokenRequest, error: unknown): Promise<never> {
    if (error instanceof GatewayError && error.code === 'invalid_client') await deps.limits.recordFailedAuth(token.request.ip, token.config.issuer)
    throw error
  }

  /** Step 8. */
  function checkFailedAuthBrake (token: TokenRequest): Pending<ServiceAccountConfig> {
    return andThen(deps.limits.checkFailedAuth(token.request.ip, token.config.issuer), token, authenticateClient)
  }

  /** Step 9. */
  function authenticateClient (token: TokenRequest): Pending<ServiceAccountConfig> {
    let account: Pending<ServiceAccountConfig>
    try {
      account = deps.clients.authenticate(token.credentials, token.request.gw.snapshot.indexes, clientSlotOf(token.request))
    } catch (error) {
      return failedAuthentication(token, error)
    }
    return account instanceof Promise ? account.catch((error: unknown) => failedAuthentication(token, error)) : account
  }

  /** Step 10. */
  function checkClientRateLimit (token: TokenRequest, account: ServiceAccountConfig): Pending<ServiceAccountConfig> {
    return andThen(deps.limits.consumeClient(account.client_id, token.config.issuer), account, sameAccount)
  }

  /** Steps 11 and 12. A key store failure here is an unexpected error: the error handler answers 500. */
  function issueToken (token: TokenRequest, account: ServiceAccountConfig): string {
    const { request, config, credentials, started } = token
    const scopes = grantScopes(formValue(token.body, 'scope'), account, config)
    const scope = scopes.join(' ')
    const lifetime = tokenLifetime(scopes, config.issuer)
    const template = templateFor(deps.keys.signing, account, config.issuer, scopes, scope)
    const signed = signFromTemplate(template, Math.floor(Date.now() / 1000), lifetime)
    request.log.info({ client_id: account.client_id, scope, jti: signed.jti, expires_in: lifetime, auth_method: credentials.method }, 'token issued')
    recordTokenIssued(account.client_id)
    if (started !== undefined) recordTokenIssuance(request.raw, started, { clientId: account.client_id, organizationId: account.organization, scopes, lifetimeSeconds: lifetime, authMethod: credentials.method })
    token.reply.code(200).header('content-type', 'application/json; charset=utf-8')
    return tokenResponseBody(signed.token, lifetime, signed.expiresAt, template.scopeJson)
  }

  /** Answers a TokenResponse, serialised (tokenResponseBody). */
  return function tokenHandler (request: FastifyRequest, reply: FastifyReply): Pending<string> {
    // Undefined while span export is off: then nothing is timed or recorded for the span.
    const started = issuanceStart()
    const config = request.gw.snapshot.config
    const body = (request.body as FormParameters | undefined) ?? new Map<string, string[]>()

    rejectDuplicates(body)
    const credentials = requireParameters(body, locateCredentials(request, body))
    checkGrantType(body)
    const token: TokenRequest = { request, reply, config, body, credentials, started }
    const account = andThen(checkFailedAuthBrake(token), token, checkClientRateLimit)
    return andThen(account, token, issueToken)
  }
}
