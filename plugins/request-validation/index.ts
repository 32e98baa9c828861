import type { FastifyReply, FastifyRequest } from 'fastify'
import { definePolicy, optionSchemaProblems, type ValidateFunction, type PolicyOptionProblem, type StepOutcome } from '../../src/plugin/index.js'
import { requestValidationSchema } from './schema.js'
import { compilePart, failureOf, type Failure, type Part } from './validators.js'

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i

/**
 * `request-validation`: the query, the JSON body and the headers against the route's JSON Schemas, before the
 * handler runs or the upstream is called. Schemas are checked as schemas at config load (a YAML path per problem)
 * and compiled once per chain build. A mismatch is a 400 `bad_request` in the route's envelope with
 * `location` (query, body, headers), `path` (a JSON Pointer, `/amount`) and `keyword` (`minimum`, `required`…).
 * The body is read only when a body schema is given, never beyond what the route accepts (the proxy's and live
 * relay's `max_body_bytes`, otherwise the route's body limit), and is passed on byte for byte.
 */
const requestValidation = definePolicy({
  name: 'request-validation',
  description: 'Checks the query, JSON body and headers against JSON Schemas before the backend is called.',
  schema: requestValidationSchema,
  summarize: (options) => `JSON Schema of ${parts(options).join(', ')}`,
  refusals: () => ['bad_request', 'payload_too_large', 'unsupported_media_type'],
  explain: (options) => ({ outcome: 'depends', status: 400, code: 'bad_request', note: `depends on the request's ${parts(options).join(', ')} matching the route's schemas` }),
  check (options) {
    const problems: PolicyOptionProblem[] = []
    for (const part of parts(options)) {
      for (const problem of optionSchemaProblems(options[part] as Record<string, unknown>)) {
        problems.push({ path: `${part}${problem.path}`, message: problem.message })
      }
    }
    return problems
  },
  create (options, context) {
    const query = options.query === undefined ? undefined : compilePart(options.query, 'query')
    const headers = options.headers === undefined ? undefined : compilePart(options.headers, 'headers')
    const body = options.body === undefined ? undefined : compilePart(options.body, 'body')
    const relayLimit = context.serviceBodyLimit

    function refuse (failure: Failure): StepOutcome {
      return context.refuse('bad_request', { message: failure.message, fields: { location: failure.location, path: failure.path, keyword: failure.keyword } })
    }

    return function requestValidationStep (request: FastifyRequest, _reply: FastifyReply): StepOutcome | Promise<StepOutcome> {
      if (query !== undefined && !query(copyOf(request.query))) return refuse(failureOf('query', query.errors))
      if (headers !== undefined && !headers(copyOf(request.headers))) return refuse(failureOf('headers', headers.errors))
      if (body === undefined || !hasBody(request)) {
        if (body !== undefined && bodyExpected(request.method) && !body(undefined)) return refuse(failureOf('body', body.errors))
        return
      }
      const limit = Math.min(relayLimit ?? Infinity, request.routeOptions.bodyLimit ?? Infinity)
      if (Number(request.headers['content-length'] ?? 0) > limit) return context.refuse('payload_too_large')
      if (!JSON_TYPE.test(request.headers['content-type'] ?? '')) {
        return context.refuse('unsupported_media_type', { message: 'This route accepts a JSON body (application/json) only.' })
      }
      return context.readRequestBody(request, limit).then(function bodyRead (bytes) {
        if (bytes === undefined) return context.refuse('payload_too_large')
        return checkBody(body, bytes, refuse)
      })
    }
  },
})

function checkBody (validate: ValidateFunction, bytes: Buffer, refuse: (failure: Failure) => StepOutcome): StepOutcome {
  let parsed: unknown
  try {
    parsed = JSON.parse(bytes.toString('utf8'))
  } catch {
    return refuse({ location: 'body', path: '', keyword: 'json', message: 'body is not valid JSON' })
  }
  if (!validate(parsed)) return refuse(failureOf('body', validate.errors))
}

function parts (options: Partial<Record<Part, unknown>>): Part[] {
  return (['query', 'body', 'headers'] as const).filter((part) => options[part] !== undefined)
}

/** A copy to validate: coercion changes the copy, never what the handler reads (arrays copied too). */
function copyOf (values: unknown): Record<string, unknown> {
  const copy: Record<string, unknown> = {}
  if (typeof values !== 'object' || values === null) return copy
  for (const [name, value] of Object.entries(values)) copy[name] = Array.isArray(value) ? [...value] : value
  return copy
}

function hasBody (request: FastifyRequest): boolean {
  const length = request.headers['content-length']
  return length === undefined ? request.headers['transfer-encoding'] !== undefined : Number(length) > 0
}

/** Methods whose requests normally carry a body: there, no body is checked as `undefined` (a schema may require one). */
function bodyExpected (method: string): boolean {
  return method === 'POST' || method === 'PUT' || method === 'PATCH'
}

export default requestValidation
