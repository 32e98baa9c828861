import type { FastifyReply, FastifyRequest } from 'fastify'
import { definePolicy, type StepOutcome } from '../../src/plugin/index.js'
import { corsSchema } from './schema.js'

/**
 * `cors`: lets browsers on the listed origins call the route. An actual request from an allowed origin gets
 * `Access-Control-Allow-Origin` (and `-Credentials`) on whatever the route answers, refusals included, so the page
 * can read a 401 or 429. A preflight (`OPTIONS` with `Access-Control-Request-Method`) is answered by the gateway
 * with 204: the mount code runs this step alone for it (`answersPreflight`; a preflight carries no credentials, so
 * auth would refuse it), and it answers with `context.answer`. An origin, method or header not allowed gets a 204
 * without the allowing headers, which the browser treats as a refusal. Nothing is refused server-side: CORS
 * protects browsers, not the API (non-browser clients send no Origin).
 */
const cors = definePolicy({
  name: 'cors',
  description: 'Cross-origin browser access: answers CORS preflights and adds Access-Control-* headers for allowed origins.',
  schema: corsSchema,
  answersPreflight: true,
  check (options) {
    if (options.credentials && options.origins.includes('*')) {
      return [{ path: 'origins', message: 'a wildcard origin "*" cannot be used with credentials: true; list the origins' }]
    }
    return []
  },
  summarize: (options) => `origins ${options.origins.join(', ')}${options.credentials ? ' with credentials' : ''}`,
  refusals: () => [],
  explain: (options) => ({ outcome: 'pass', note: `never refuses; allows browsers on ${options.origins.join(', ')} and answers their preflights` }),
  create (options, context) {
    const any = options.origins.includes('*')
    const origins = new Set(options.origins)
    const allowMethods = options.methods.join(', ')
    const allowedMethods = new Set<string>(options.methods)
    const allowedHeaders = new Set(options.headers.map((h) => h.toLowerCase()))
    const allowHeaders = options.headers.join(', ')
    const credentials = options.credentials

    /** The Access-Control-Allow-Origin value for this origin, or undefined when it is not allowed. */
    function allowOrigin (origin: string): string | undefined {
      if (origins.has(origin)) return origin
      return any ? '*' : undefined
    }

    function preflight (origin: string | undefined, request: FastifyRequest): StepOutcome {
      const headers: Record<string, string> = { vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers' }
      const allowed = origin === undefined ? undefined : allowOrigin(origin)
      const method = request.headers['access-control-request-method']
      const asked = String(request.headers['access-control-request-headers'] ?? '').split(',').map((h) => h.trim().toLowerCase()).filter((h) => h !== '')
      if (allowed !== undefined && typeof method === 'string' && allowedMethods.has(method) && asked.every((h) => allowedHeaders.has(h))) {
        headers['access-control-allow-origin'] = allowed
        headers['access-control-allow-methods'] = allowMethods
        if (allowHeaders !== '') headers['access-control-allow-headers'] = allowHeaders
        if (credentials) headers['access-control-allow-credentials'] = 'true'
        if (options.max_age_seconds !== undefined) headers['access-control-max-age'] = String(options.max_age_seconds)
      }
      return context.answer(204, headers)
    }

    return function corsStep (request: FastifyRequest, reply: FastifyReply): StepOutcome {
      const origin = request.headers.origin
      if (request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined) return preflight(origin, request)
      if (origin === undefined) return
      const allowed = allowOrigin(origin)
      if (!any || credentials) reply.header('vary', 'Origin')
      if (allowed === undefined) return
      reply.header('access-control-allow-origin', allowed)
      if (credentials) reply.header('access-control-allow-credentials', 'true')
    }
  },
})

export default cors
