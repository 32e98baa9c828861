import type { FastifyReply, FastifyRequest } from 'fastify'
import { definePolicy, type GatewaySettings, type PolicyContext, type PolicyOptionProblem, type PolicyPlace, type Principal, type ResponseHead, type ResponseHeadHook, type StepOutcome } from '../../src/plugin/index.js'
import { changeLines } from './change-lines.js'
import { mappingProblem } from './mapping.js'
import { applyNames, changeQuery, compileNames, templateProblems, usesPrincipal, type CompiledNames } from './names.js'
import { requestBodyStep } from './request-body.js'
import { responseBodyHook } from './response-body.js'
import { compileReshape } from './reshape.js'
import { formatsOf, soapAnswerFormat } from './formats.js'
import type { RequestBodyPlan } from './request-body.js'
import type { ResponseBodyPlan } from './response-body.js'
import { soapActionHeader, soapContentType, soapEnvelope, soapUnwrap } from './soap.js'
import { transformSchema, type JsonBodyChanges, type NameChanges, type TransformOptions } from './schema.js'

/**
 * `transform`: reshapes a relayed request and its answer (the live proxy, `type: proxy` services) — headers and
 * query parameters (rename, remove, set; values may name the principal, route parameters and the query), and JSON
 * bodies (rename, remove and set fields by dotted path; a JSONata mapping for whole-body reshaping). Bodies are
 * read whole only when a body change is configured, never past `max_body_bytes`: the request through the body
 * phase's `readRequestBody`/`setRequestBody`, the answer through a response body hook (`onResponseBody`). A
 * request body the changes cannot take is a 400 `transform_failed` naming the path; an answer they cannot take is
 * the upstream's fault, 502 `upstream_failure: protocol`.
 */
const transform = definePolicy({
  name: 'transform',
  description: 'Reshapes relayed requests and answers: headers, query parameters and JSON bodies (fields, or a JSONata mapping).',
  schema: transformSchema,
  errors: {
    transform_timeout: { status: 500, message: 'The route\'s body mapping ran longer than its time limit.' },
  },
  requires: (options) => principalNeeded(options) ? ['auth'] : [],
  summarize: (options) => describe(options),
  details: changeLines,
  refusals: (options) => [
    ...(options.request?.body === undefined && options.soap === undefined ? [] : ['transform_failed', 'payload_too_large', 'unsupported_media_type']),
    ...(options.request?.body?.map === undefined && options.response?.body?.map === undefined ? [] : ['transform_timeout']),
  ],
  explain: (options) => options.request?.body === undefined
    ? { outcome: 'pass', note: describe(options) }
    : { outcome: 'depends', status: 400, code: 'transform_failed', note: `depends on the request body fitting the changes; ${describe(options)}` },
  check: (options, settings, place) => [...checkOptions(options), ...checkPlace(options, settings, place)],
  create (options, context) {
    const requestHeaders = compileNames(options.request?.headers, true)
    const query = compileNames(options.request?.query, false)
    const responseHeaders = compileNames(options.response?.headers, true)
    const bodies = bodyPlans(options, context)
    const changeHead = responseHeaders === undefined ? undefined : responseHeadHook(responseHeaders, context.principal)
    const bodyStep = bodies.request === undefined ? undefined : requestBodyStep(bodies.request, options.max_body_bytes, options.map_timeout_ms, context)
    const answerHook = bodies.response === undefined ? undefined : responseBodyHook(bodies.response, options.map_timeout_ms, context)
    const soapAction = options.soap === undefined ? undefined : soapActionHeader(options.soap)

    return function transformStep (request: FastifyRequest, reply: FastifyReply): StepOutcome | Promise<StepOutcome> {
      const principal = context.principal(request)
      if (requestHeaders !== undefined) applyNames(requestHeaders, headerTarget(request), request, principal)
      if (soapAction !== undefined) request.raw.headers.soapaction = soapAction
      if (query !== undefined) request.raw.url = changeQuery(request.raw.url ?? '', query, request, principal)
      if (changeHead !== undefined) context.onResponseHead(reply, changeHead)
      if (answerHook !== undefined) context.onResponseBody(reply, answerHook, options.max_body_bytes)
      if (bodyStep !== undefined) return bodyStep(request)
    }
  },
})

/**
 * The body plans of the options: what the request and the answer are read as, changed by and written as. With
 * `soap`, both exist even without body changes: every call is an envelope sent by POST (a GET's parameters
 * reach the Body through a mapping), and the answer's Body content (or Fault) is what the caller gets.
 */
function bodyPlans (options: TransformOptions, context: PolicyContext): { request?: RequestBodyPlan, response?: ResponseBodyPlan } {
  const format = formatsOf(options)
  const compile = (changes: JsonBodyChanges) => compileReshape(changes, options.map_timeout_ms)
  const requestBody = options.request?.body
  const responseBody = options.response?.body
  const soap = options.soap
  if (soap === undefined) {
    return {
      request: requestBody === undefined ? undefined : { reshape: compile(requestBody), from: format(requestBody.from), to: format(requestBody.to), contentType: format(requestBody.to).contentType },
      response: responseBody === undefined ? undefined : { reshape: compile(responseBody), from: format(responseBody.from), to: format(responseBody.to) },
    }
  }
  const xml = options.xml
  return {
    request: {
      reshape: compile(requestBody ?? {}),
      from: format(requestBody?.from),
      to: format('xml'),
      contentType: soapContentType(soap),
      method: 'POST',
      path: '',
      always: true,
      wrap: soapEnvelope(soap, xml.attribute_prefix),
    },
    response: {
      reshape: compile(responseBody ?? {}),
      from: soapAnswerFormat(options),
      to: format(responseBody?.to),
      unwrap: soapUnwrap(context, xml.attribute_prefix, xml.text_key),
    },
  }
}

function headerTarget (request: FastifyRequest) {
  const headers = request.raw.headers
  return {
    get: (name: string) => headers[name],
    set: (name: string, value: string | string[]) => { headers[name] = value },
    delete: (name: string) => { delete headers[name] },
  }
}

function responseHeadHook (changes: CompiledNames, principalOf: (request: FastifyRequest) => Principal | undefined): ResponseHeadHook {
  return function transformResponseHead (head: ResponseHead, request: FastifyRequest): void {
    applyNames(changes, {
      get: (name) => {
        const value = head.header(name)
        return typeof value === 'number' ? String(value) : value
      },
      set: (name, value) => { head.setHeader(name, [value].flat().join(', ')) },
      delete: (name) => { head.removeHeader(name) },
    }, request, principalOf(request))
  }
}

function namesIn (changes: NameChanges | undefined): string[] {
  return Object.values(changes?.set ?? {})
}

function principalNeeded (options: TransformOptions): boolean {
  const values = [...namesIn(options.request?.headers), ...namesIn(options.request?.query), ...namesIn(options.response?.headers)]
  return values.some(usesPrincipal) || [options.request?.body?.map, options.response?.body?.map].some((map) => map?.includes('$principal') === true)
}

function checkOptions (options: TransformOptions): PolicyOptionProblem[] {
  const problems: PolicyOptionProblem[] = []
  if (options.request === undefined && options.response === undefined && options.soap === undefined) problems.push({ path: '', message: 'nothing to transform: give `request`, `response` or `soap`' })
  if (options.soap !== undefined) {
    if (options.request?.body?.to !== undefined) problems.push({ path: 'request/body/to', message: 'with `soap` the upstream gets a SOAP envelope: leave `to` out' })
    if (options.response?.body?.from !== undefined) problems.push({ path: 'response/body/from', message: 'with `soap` the upstream answers a SOAP envelope: leave `from` out' })
  }
  const sets: Array<[string, NameChanges | undefined]> = [['request/headers', options.request?.headers], ['request/query', options.request?.query], ['response/headers', options.response?.headers]]
  for (const [path, changes] of sets) {
    for (const [name, value] of Object.entries(changes?.set ?? {})) {
      for (const message of templateProblems(value)) problems.push({ path: `${path}/set/${name}`, message })
    }
  }
  for (const [path, map] of [['request/body/map', options.request?.body?.map], ['response/body/map', options.response?.body?.map]] as const) {
    const problem = map === undefined ? undefined : mappingProblem(map)
    if (problem !== undefined) problems.push({ path, message: `not a valid JSONata expression: ${problem}` })
  }
  return problems
}

/**
 * Body and query changes need a route the gateway relays (the live proxy, a `type: proxy` service): an in-process
 * handler has parsed its body and query before the chain runs, and answers without the body phase.
 */
function checkPlace (options: TransformOptions, settings: GatewaySettings, place: PolicyPlace | undefined): PolicyOptionProblem[] {
  if (place === undefined) return []
  if (settings.relays(place.service)) return []
  const needing = [options.request?.body && 'request/body', options.request?.query && 'request/query', options.response?.body && 'response/body', options.soap && 'soap'].filter((p) => typeof p === 'string')
  return needing.map((path) => ({ path, message: 'body and query changes apply only on relayed routes (the live service, `type: proxy` services)' }))
}

/** One line: what the policy changes (for `lanegate routes` and `explain`). */
export function describe (options: TransformOptions): string {
  const parts: string[] = []
  const side = (label: string, changes: Record<string, unknown> | undefined) => {
    if (changes === undefined) return
    for (const [part, value] of Object.entries(changes)) {
      if (value === undefined) continue
      const changes = Object.entries(value as Record<string, unknown>).map(([key, change]) => key === 'map' ? `map ${String(change)}` : ['from', 'to'].includes(key) ? `${key} ${String(change)}` : key)
      parts.push(`${label} ${part}: ${changes.join(', ')}`)
    }
  }
  side('request', options.request)
  side('response', options.response)
  if (options.soap !== undefined) parts.push(`SOAP ${options.soap.version} ${options.soap.operation} (${options.soap.namespace})`)
  return parts.length === 0 ? 'no changes' : parts.join('; ')
}

export default transform
