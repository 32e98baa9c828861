import Fastify, { type FastifyReply, type FastifyRequest, type HookHandlerDoneFunction } from 'fastify'
import { gatewaySettings } from '../config/gateway-settings.js'
import { buildIndexes } from '../config/indexes.js'
import { routePolicies, type GatewayConfig } from '../config/types.js'
import { policyName } from '../config/semantic-checks.js'
import { createErrorHandler } from '../errors/error-handler.js'
import { GatewayError } from '../plugin/gateway-error.js'
import type { ReplacedAnswer, UpstreamAnswer } from '../plugin/body-hook.js'
import { localConnectionSlots } from '../plugin/connection-slots.js'
import { policyContext } from '../plugin/context.js'
import type { Principal } from '../plugin/request-state.js'
import { responseHooksOf } from '../plugin/response-phase.js'
import { runSteps } from '../plugin/run-steps.js'
import type { PolicyStep } from '../plugin/step.js'
import type { Catalog } from '../pipeline/registry.js'
import { requestContext } from '../runtime/request-context.js'
import type { Snapshot } from '../runtime/snapshot.js'
import { explainRequest, principalOf, type ExplainCaller } from './explain.js'

/** What `lanegate transform` was asked to try. */
export interface TryInput {
  readonly method: string
  /** The path (and query) a caller would request. */
  readonly path: string
  readonly body: Buffer
  readonly contentType: string
  /** Try the answer side: `body` is the upstream's answer with `status`. */
  readonly response: boolean
  readonly status: number
  readonly caller: ExplainCaller
}

/** What the route's `transform` steps made of the sample: the request sent upstream, or the answer the caller gets. */
export type TryResult =
  | { kind: 'request', method: string, path: string | undefined, contentType: string | undefined, body: Buffer }
  | { kind: 'response', status: number, contentType: string | undefined, body: Buffer, unchanged: boolean }
  | { kind: 'refused', status: number, body: unknown }
  | { kind: 'none', reason: string }

const UNAVAILABLE = (): never => { throw new Error('not available while trying a transform (nothing is sent)') }
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']

/**
 * Runs the `transform` steps of the route METHOD PATH matches over a sample body, as the route would, with nothing
 * sent: the request side (the body the upstream would get), or with `response` the answer side (what the caller
 * would get for that upstream answer). The sample goes through a bare fastify app by `inject`: the steps run by
 * the gateway's chain runner, a refusal rendered by its error handler in the route's envelope. Other policies of
 * the chain are not run (`caller` names the principal the mappings see).
 */
export async function tryTransform (config: GatewayConfig, catalog: Catalog, input: TryInput): Promise<TryResult> {
  const explained = explainRequest(config, catalog, input.method, input.path, input.caller)
  const route = explained.route
  if (route === undefined) return { kind: 'none', reason: `no route serves ${input.method} ${input.path}` }
  const block = config.services[route.service]
  const entry = block?.routes[route.route]
  const transforms = block === undefined || entry === undefined ? [] : [...block.policies, ...routePolicies(entry)].filter((p) => policyName(p) === 'transform')
  if (block === undefined || transforms.length === 0) return { kind: 'none', reason: `route ${route.service}/${route.route} has no transform policy` }
  const plugin = catalog.plugins.get('transform')
  if (plugin === undefined) return { kind: 'none', reason: 'the transform policy is not loaded' }
  const indexes = buildIndexes(config)
  const context = policyContext(plugin, {
    settings: gatewaySettings(config),
    reachStore: UNAVAILABLE,
    service: route.service,
    routeId: route.route,
    envelope: block.envelope,
    tokens: { verify: UNAVAILABLE },
    apiKeys: { verify: UNAVAILABLE },
    limiter: UNAVAILABLE,
    connectionSlots: localConnectionSlots(),
  })
  const chain = transforms.map((options) => plugin.create(options.transform ?? {}, context))
  const principal = principalOf(config, indexes, input.caller)
  const snapshot = { version: 1, config, indexes, chains: new Map() }
  return runSample(chain, input, { snapshot, service: route.service, routeId: route.route, envelope: block.envelope, principal, params: route.params })
}

interface SampleRoute {
  readonly snapshot: Snapshot
  readonly service: string
  readonly routeId: string
  readonly envelope: GatewayConfig['services'][string]['envelope']
  readonly principal: Principal | undefined
  readonly params: Record<string, string>
}

/** Sends the sample through `chain` in a bare app; the handler takes what the steps made of it. */
async function runSample (chain: readonly PolicyStep[], input: TryInput, route: SampleRoute): Promise<TryResult> {
  const app = Fastify({ logger: false })
  let result: TryResult | undefined
  app.decorateRequest('gw', null as never)
  app.setErrorHandler(createErrorHandler(route.envelope))
  // The steps read the body from the stream, as on a relayed route: fastify leaves it unparsed.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', function keepStream (_request, _payload, done) { done(null) })
  app.route({
    method: METHODS,
    url: '*',
    onRequest: function runTransforms (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) {
      request.gw = requestContext(route.snapshot, route.service, route.routeId, route.envelope)
      request.gw.principal = route.principal
      request.params = route.params
      runSteps(chain, 0, request, reply, done)
    },
    handler: async function sampleThrough (request: FastifyRequest, reply: FastifyReply) {
      result = input.response ? await answerSide(request, input) : requestSide(request, input)
      return reply.code(204).send()
    },
  })
  try {
    const sample = input.response ? undefined : input.body
    const response = await app.inject({
      method: input.method,
      url: input.path,
      headers: sample === undefined || sample.length === 0 ? {} : { 'content-type': input.contentType },
      payload: sample,
    })
    return result ?? { kind: 'refused', status: response.statusCode, body: response.body === '' ? null : response.json() }
  } finally {
    await app.close()
  }
}

function requestSide (request: FastifyRequest, input: TryInput): TryResult {
  const hooks = responseHooksOf(request)
  return { kind: 'request', method: hooks?.requestMethod ?? input.method, path: hooks?.requestPath, contentType: request.raw.headers['content-type'], body: hooks?.requestBody ?? input.body }
}

/** The sample answer through the response body hooks the steps registered; a refusal is thrown to the error handler. */
async function answerSide (request: FastifyRequest, input: TryInput): Promise<TryResult> {
  let answer: UpstreamAnswer = { status: input.status, headers: { 'content-type': input.contentType }, body: input.body }
  let contentType: string | undefined = input.contentType
  let replaced: ReplacedAnswer | undefined
  for (const hook of responseHooksOf(request)?.body?.hooks ?? []) {
    const outcome = await hook(answer, request)
    if (outcome instanceof Error) throw outcome
    if (outcome === undefined) continue
    replaced = outcome
    contentType = outcome.headers?.['content-type'] ?? contentType
    answer = { status: outcome.status ?? answer.status, headers: answer.headers, body: Buffer.from(outcome.body) }
  }
  if (replaced === undefined && input.status >= 400) throw new GatewayError('upstream_error', { fields: { upstream_status: input.status } }).withStatus(input.status)
  return { kind: 'response', status: answer.status, contentType, body: answer.body, unchanged: replaced === undefined }
}
