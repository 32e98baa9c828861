import type { FastifyRequest } from 'fastify'
import { LRUCache } from 'lru-cache'
import { request as undiciRequest } from 'undici'
import { bearerChallenge, defaultRealm, definePolicy, type PolicyContext, type Principal, type Refusal, type StepOutcome } from '../../src/plugin/index.js'
import { externalAuthSchema, type ExternalAuthOptions } from './schema.js'

/** A decision: allow (with the headers to add) or the refusal's status. */
type Decision = { readonly allow: true, readonly add: ReadonlyArray<readonly [string, string]> } | { readonly allow: false, readonly status: 401 | 403 }

/** Headers that describe the connection or the body, never taken from a decision (they would corrupt the relay). */
const hopByHop = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'host', 'upgrade', 'te', 'trailer', 'proxy-connection'])

/**
 * `external-auth`: asks a decision service whether the request may go on, with the method, path, service and route, the headers
 * the options name and the caller (when an `auth` step ran before). A 2xx allows, optionally setting the headers
 * `add_headers` names from its answer on the request; 401 and 403 refuse in the route's envelope; anything else,
 * a timeout or an unreachable service refuses with 503 auth_unavailable: the request never goes on undecided.
 * With `cache_seconds`, a decision is reused for the same caller, method, path and sent header values.
 */
const externalAuth = definePolicy({
  name: 'external-auth',
  description: 'Asks an outside decision service (entitlements, OPA) whether the request may go on.',
  schema: externalAuthSchema,
  check (options) {
    return (options.add_headers ?? []).flatMap((name, i) => hopByHop.has(name.toLowerCase()) ? [{ path: `add_headers/${i}`, message: `"${name}" describes the connection, not the request: it cannot be taken from a decision` }] : [])
  },
  summarize: (options) => `asks ${options.url}${options.cache_seconds === undefined ? '' : ` (decisions cached ${options.cache_seconds} s)`}`,
  refusals: () => ['unauthenticated', 'forbidden', 'auth_unavailable'],
  explain: (options) => ({ outcome: 'depends', note: `the decision of ${options.url}` }),
  create (options, context) {
    const ask = decisionAsker(options, context)
    const sent = (options.headers ?? []).map((name) => name.toLowerCase())
    const add = (options.add_headers ?? []).map((name) => name.toLowerCase())
    const ttl = (options.cache_seconds ?? 0) * 1000
    // ttlResolution 0: each lookup reads the clock, and no timer is armed (the default 1 ms one runs per lookup).
    const cache = ttl > 0 ? new LRUCache<string, Decision>({ max: 10_000, ttl, ttlResolution: 0 }) : undefined

    return function externalAuthStep (request: FastifyRequest): StepOutcome | Promise<StepOutcome> {
      const principal = context.principal(request)
      const headers = sent.length === 0 ? noHeaders : sentHeaders(request, sent)
      const query = request.url.indexOf('?')
      const path = query === -1 ? request.url : request.url.slice(0, query)
      const key = cache === undefined ? undefined : cacheKey(principal, request.method, path, headers)
      const known = key === undefined ? undefined : cache?.get(key)
      if (known !== undefined) return apply(known, request, context)
      return ask(request.method, path, headers, principal, add).then(
        function decided (decision) {
          if (key !== undefined) cache?.set(key, decision)
          return apply(decision, request, context)
        },
        function failed (error: unknown) {
          request.log.warn({ decision_url: options.url, reason: error instanceof Error ? error.message : String(error) }, 'external-auth: no decision; refused with 503')
          return context.refuse('auth_unavailable', { message: 'The authorization service did not answer; retry shortly.' })
        },
      )
    }
  },
})

/** What a route that sends no header sends: one object for every request. */
const noHeaders: Readonly<Record<string, string>> = Object.freeze({})

/** The values of the request headers the options name (a repeated one joined by commas). */
function sentHeaders (request: FastifyRequest, sent: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {}
  for (const name of sent) {
    const value = request.headers[name]
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value
  }
  return headers
}

/**
 * The decision cache's key: who the caller is (everything that may tell two callers apart), the method, the path and
 * the sent header values, joined by a line feed, which none of them can contain (HTTP forbids it in a request line
 * and in header values; an outside issuer's claims could hold one, so the caller's parts are JSON-quoted).
 */
function cacheKey (principal: Principal | undefined, method: string, path: string, headers: Readonly<Record<string, string>>): string {
  let key = `${principal === undefined ? '-' : callerPart(principal)}\n${method}\n${path}`
  for (const name in headers) key += `\n${name}:${headers[name] as string}`
  return key
}

/** One caller part per principal object (the token verifier hands out the same one per token). */
const callerParts = new WeakMap<Principal, string>()

function callerPart (principal: Principal): string {
  let caller = callerParts.get(principal)
  if (caller === undefined) {
    // The scopes too: the decision service is sent them, and two tokens of one client may carry different ones.
    caller = JSON.stringify([principal.issuer, principal.tokenType, principal.clientId, principal.subject, principal.organizationId, [...principal.scopes].sort()])
    callerParts.set(principal, caller)
  }
  return caller
}

function apply (decision: Decision, request: FastifyRequest, context: PolicyContext): Refusal | undefined {
  if (!decision.allow) {
    return decision.status === 401
      ? context.refuse('unauthenticated', { headers: { 'WWW-Authenticate': bearerChallenge(defaultRealm) } })
      : context.refuse('forbidden')
  }
  const incoming = request.raw.headers
  for (const [name, value] of decision.add) incoming[name] = value
  return undefined
}

/** The request to the decision service and the reading of its answer. */
function decisionAsker (options: ExternalAuthOptions, context: PolicyContext) {
  const service = context.service
  const route = context.routeId
  return async function ask (method: string, path: string, headers: Record<string, string>, principal: Principal | undefined, add: readonly string[]): Promise<Decision> {
    const res = await undiciRequest(options.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ method, path, service, route, headers, principal: principal === undefined ? null : describe(principal) }),
      signal: AbortSignal.timeout(options.timeout_ms),
    })
    // The answer's body is not read: the status decides. It is drained so the connection can be reused.
    await res.body.dump()
    if (res.statusCode >= 200 && res.statusCode < 300) {
      const taken: Array<readonly [string, string]> = []
      for (const name of add) {
        const value = res.headers[name]
        if (typeof value === 'string') taken.push([name, value])
        else if (Array.isArray(value)) taken.push([name, value.join(', ')])
      }
      return { allow: true, add: taken }
    }
    if (res.statusCode === 401 || res.statusCode === 403) return { allow: false, status: res.statusCode }
    throw new Error(`the decision service answered ${res.statusCode}`)
  }
}

function describe (principal: Principal): Record<string, unknown> {
  return {
    token_type: principal.tokenType,
    subject: principal.subject,
    client_id: principal.clientId,
    organization_id: principal.organizationId,
    scopes: [...principal.scopes],
    issuer: principal.issuer,
  }
}

export default externalAuth
