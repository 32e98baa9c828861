import type { FastifyReply, FastifyRequest } from 'fastify'
import { clientIpKey, definePolicy, type CountOutcome, type GatewaySettings, type PolicyContext, type Principal, type StepOutcome } from '../../src/plugin/index.js'
import { rateLimitSchema, type RateLimitOptions } from './schema.js'

/**
 * `rate-limit`: counts each request against a named limit, keyed by client IP (its /64 for IPv6), client id or
 * organization. Every answer carries `X-RateLimit-Limit` and `X-RateLimit-Remaining`; over the limit it is a 429
 * with an integer `Retry-After` (seconds to the window's reset, at least 1). When the limiter store fails the
 * registry's `on_store_error` decides: `open` lets the request through without the headers, `closed` answers
 * 503. A store failure is never reported as a 429 (D4).
 */
const rateLimit = definePolicy({
  name: 'rate-limit',
  description: 'Counts requests against a named limit (by IP, client or organization).',
  schema: rateLimitSchema,
  // A client- or organization-keyed limit demands that auth runs first (see docs/policies.md).
  requires (options: RateLimitOptions, settings?: GatewaySettings) {
    const key = settings?.rateLimits[options.limit]?.key
    return key === 'client' || key === 'organization' ? ['auth'] : []
  },
  summarize: (options) => `limit ${options.limit}`,
  check (options, settings) {
    if (Object.hasOwn(settings.rateLimits, options.limit)) return []
    return [{ path: 'limit', message: `unknown rate limit "${options.limit}": define it under rate_limits` }]
  },
  refusals: () => ['too_many_requests', 'service_unavailable'],
  explain (options, request) {
    const limit = request.settings.rateLimits[options.limit]
    if (limit === undefined) return { outcome: 'refuse', status: 500, code: 'internal_error', note: `unknown rate limit ${options.limit}` }
    const key = limit.key === 'ip'
      ? 'the client IP'
      : `${limit.key} ${(limit.key === 'client' ? request.caller?.clientId : request.caller?.organizationId) ?? '(unknown)'}`
    return { outcome: 'depends', status: 429, code: 'too_many_requests', note: `counts against limit ${options.limit} (${limit.points} per ${limit.window_seconds} s, keyed by ${key})` }
  },
  create (options, context) {
    const limit = context.settings.rateLimits[options.limit]
    if (limit === undefined) throw new Error(`unknown rate limit "${options.limit}"`)
    const counter = context.limiter(options.limit)
    const failOpen = counter.onStoreError === 'open'
    const points = String(limit.points)
    const keyOf = limit.key === 'ip'
      ? clientIpKey
      : limit.key === 'client'
        ? (request: FastifyRequest) => principalOf(request, context).clientId
        : (request: FastifyRequest) => principalOf(request, context).organizationId

    // Header names in lower case, as fastify keeps them: a mixed-case name cost every request a lower-cased copy and
    // a string-table lookup of it, twice (on the wire the names are lower case either way).
    function applyOutcome (reply: FastifyReply, outcome: CountOutcome): StepOutcome {
      reply.header('x-ratelimit-limit', points)
      if (outcome.allowed) {
        reply.header('x-ratelimit-remaining', String(outcome.remaining))
        return
      }
      const retryAfter = Math.max(1, Math.ceil(outcome.msBeforeReset / 1000))
      reply.header('x-ratelimit-remaining', '0')
      return context.refuse('too_many_requests', {
        fields: { retry_after: retryAfter },
        headers: { 'Retry-After': String(retryAfter) },
        limit: options.limit,
      })
    }

    function storeFailed (request: FastifyRequest, error: unknown): StepOutcome {
      if (failOpen) {
        request.log.warn({ err: error, limit: options.limit }, 'rate-limit store failed; request let through unlimited')
        return
      }
      request.log.error({ err: error, limit: options.limit }, 'rate-limit store failed; request refused')
      return context.refuse('service_unavailable')
    }

    // Synchronous with the memory store (no promise per request); a promise with Redis.
    return function rateLimitStep (request: FastifyRequest, reply: FastifyReply): StepOutcome | Promise<StepOutcome> {
      let counted: CountOutcome | Promise<CountOutcome>
      try {
        counted = counter.count(keyOf(request))
      } catch (error) {
        return storeFailed(request, error)
      }
      if (!(counted instanceof Promise)) return applyOutcome(reply, counted)
      return counted.then(
        function countedInStore (outcome) { return applyOutcome(reply, outcome) },
        function storeRejected (error: unknown) { return storeFailed(request, error) },
      )
    }
  },
})

/** The caller, for client- and organization-keyed limits (`requires` puts auth first); thrown without one (a 500). */
function principalOf (request: FastifyRequest, context: PolicyContext): Principal {
  const principal = context.principal(request)
  if (principal === undefined) throw new Error(`route ${context.service}/${context.routeId} has no principal: auth must run first`)
  return principal
}

export default rateLimit
