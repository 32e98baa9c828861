import type { FastifyRequest } from 'fastify'
import { bearerChallenge, defaultRealm, definePolicy, type PolicyContext, type PolicyOptionProblem, type Principal, type Refusal, type StepOutcome } from '../../src/plugin/index.js'
import { noPrincipal } from '../principal-of.js'
import { scopeSchema } from './schema.js'

/**
 * `scope`: the caller's token must carry the route's scopes. A missing scope is a 403 with the RFC 6750 §3.1
 * `insufficient_scope` challenge naming the scopes needed (B11); the payments envelope shows which scope.
 */
const scope = definePolicy({
  name: 'scope',
  description: 'Requires all (or any) of the listed scopes on the caller\'s token.',
  // Reads only the request, the caller and the config: run again on the route's open WebSockets after a reload.
  recheck: true,
  schema: scopeSchema,
  requires: () => ['auth'],
  check (options, settings) {
    const problems: PolicyOptionProblem[] = []
    for (const list of ['all', 'any'] as const) {
      options[list]?.forEach((name, index) => {
        if (!settings.scopes.has(name)) problems.push({ path: `${list}/${index}`, message: `unknown scope "${name}": list it under scopes` })
      })
    }
    return problems
  },
  summarize: (options) => [options.all && `all of ${options.all.join(', ')}`, options.any && `any of ${options.any.join(', ')}`].filter(Boolean).join('; '),
  refusals: () => ['forbidden'],
  explain (options, request) {
    const caller = request.caller
    if (caller === undefined || !request.authenticated) return { outcome: 'refuse', status: 500, code: 'internal_error', note: 'no auth step before this one' }
    const missing = (options.all ?? []).filter((name) => !caller.scopes.has(name))
    if (missing.length > 0) return { outcome: 'refuse', status: 403, code: 'forbidden', note: `${caller.clientId} lacks ${missing.join(', ')}` }
    const any = options.any ?? []
    if (any.length > 0 && !any.some((name) => caller.scopes.has(name))) {
      return { outcome: 'refuse', status: 403, code: 'forbidden', note: `${caller.clientId} has none of ${any.join(', ')}` }
    }
    return { outcome: 'pass', note: `${caller.clientId} has ${[...(options.all ?? []), ...any.filter((name) => caller.scopes.has(name))].join(', ')}` }
  },
  create (options, context) {
    const all = options.all ?? []
    const any = options.any ?? []
    return function scopeStep (request: FastifyRequest): StepOutcome {
      const principal = context.principal(request)
      if (principal === undefined) return noPrincipal(context)
      const granted = principal.scopes
      // A loop rather than filter(): a request that has every scope allocates nothing. Indexed, not for-of: `all` is
      // frozen with the config, and V8 iterates a frozen array through a builtin call per element.
      for (let i = 0; i < all.length; i++) {
        if (granted.has(all[i] as string)) continue
        const missing = all.filter((needed) => !granted.has(needed))
        return insufficientScope(context, principal, all, `This action requires the ${missing.join(' and ')} scope${missing.length > 1 ? 's' : ''}.`)
      }
      if (any.length > 0 && !any.some((name) => granted.has(name))) {
        return insufficientScope(context, principal, any, any.length === 1 ? `This action requires the ${any[0]} scope.` : `This action requires one of the ${any.join(', ')} scopes.`)
      }
    }
  },
})

/**
 * The 403. A bearer token's caller gets RFC 6750's `insufficient_scope` challenge; an API key's caller (the
 * `api-key` policy's principal, `tokenId: 'api-key'`) gets none: a Bearer challenge would tell it to fetch a token
 * it never used, and RFC 9110 §15.5.4 does not ask a 403 for one.
 */
function insufficientScope (context: PolicyContext, principal: Principal, needed: string[], message: string): Refusal {
  if (principal.tokenId === API_KEY_TOKEN_ID) return context.refuse('forbidden', { message })
  return context.refuse('forbidden', {
    message,
    headers: { 'WWW-Authenticate': bearerChallenge(defaultRealm, { error: 'insufficient_scope', scope: needed.join(' ') }) },
  })
}

/** The `tokenId` of every principal an API key gives (src/auth/api-key-verifier.ts). */
const API_KEY_TOKEN_ID = 'api-key'

export default scope
