import { PassThrough } from 'node:stream'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { buildIndexes } from '../config/indexes.js'
import { routePolicies, type GatewayConfig } from '../config/types.js'
import { policyName } from '../config/semantic-checks.js'
import { renderError } from '../errors/envelopes.js'
import { GatewayError } from '../errors/gateway-error.js'
import type { ReplacedAnswer } from '../plugin/body-hook.js'
import { policyContext } from '../plugin/context.js'
import type { PolicyContext } from '../plugin/policy.js'
import type { Principal, RequestState } from '../plugin/request-state.js'
import { responseHooksOf } from '../plugin/response-phase.js'
import type { Catalog } from '../pipeline/registry.js'
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

/**
 * Runs the `transform` steps of the route METHOD PATH matches over a sample body, as the route would, with nothing
 * sent: the request side (the body the upstream would get), or with `response` the answer side (what the caller
 * would get for that upstream answer). Other policies of the chain are not run (`caller` names the principal the
 * mappings see); the steps use the contract's body phase exactly as on a served route.
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
    config, indexes, service: route.service, routeId: route.route, envelope: block.envelope,
    tokens: { verify: UNAVAILABLE }, apiKeys: { verify: UNAVAILABLE }, limiter: UNAVAILABLE, connectionSlots: { acquire: UNAVAILABLE, release: UNAVAILABLE },
  } as unknown as Parameters<typeof policyContext>[1]) as PolicyContext
  const principal = principalOf(config, indexes, input.caller)
  const { request, reply } = sampleRequest(input, route.params, principal, route.service, route.route, block.envelope)
  try {
    for (const options of transforms) {
      const outcome = await plugin.create(options.transform ?? {}, context)(request, reply)
      if (outcome instanceof GatewayError) return refused(outcome, block.envelope)
    }
    const hooks = responseHooksOf(request)
    if (!input.response) {
      const headers = request.raw.headers
      return { kind: 'request', method: hooks?.requestMethod ?? input.method, path: hooks?.requestPath, contentType: headers['content-type'], body: hooks?.requestBody ?? input.body }
    }
    let answer = { status: input.status, headers: { 'content-type': input.contentType } as Record<string, string>, body: input.body }
    let replaced: ReplacedAnswer | undefined
    for (const hook of hooks?.body?.hooks ?? []) {
      const result = await hook(answer, request)
      if (result instanceof GatewayError) return refused(result, block.envelope)
      if (result === undefined) continue
      replaced = result
      answer = { status: result.status ?? answer.status, headers: { ...answer.headers, ...result.headers }, body: Buffer.from(result.body) }
    }
    if (replaced === undefined && input.status >= 400) return refused(new GatewayError('upstream_error', { fields: { upstream_status: input.status } }).withStatus(input.status), block.envelope)
    return { kind: 'response', status: answer.status, contentType: answer.headers['content-type'], body: answer.body, unchanged: replaced === undefined }
  } catch (error) {
    if (error instanceof GatewayError) return refused(error, block.envelope)
    throw error
  }
}

function refused (error: GatewayError, envelope: string): TryResult {
  return { kind: 'refused', status: error.status, body: renderError(error, envelope as Parameters<typeof renderError>[1]) }
}

/** A request as the chain sees it, carrying the sample body (or none, for the answer side), and its reply. */
function sampleRequest (input: TryInput, params: Record<string, string>, principal: Principal | undefined, service: string, routeId: string, envelope: string) {
  const raw = new PassThrough() as PassThrough & { headers: Record<string, string>, method: string, url: string, complete: boolean }
  const body = input.response ? Buffer.alloc(0) : input.body
  raw.headers = body.length === 0 ? {} : { 'content-type': input.contentType, 'content-length': String(body.length) }
  raw.method = input.method
  raw.url = input.path
  raw.end(body)
  const query = Object.fromEntries(new URLSearchParams(input.path.split('?')[1] ?? ''))
  const gw = { service, routeId, envelope, principal, response: undefined, reached: undefined } as unknown as RequestState
  const log = { error: () => {}, warn: () => {}, info: () => {}, debug: () => {} }
  const request = { raw, headers: raw.headers, method: input.method, url: input.path, params, query, id: 'try', log, gw } as unknown as FastifyRequest
  const reply = { request, raw: { once: () => {} }, header: () => reply } as unknown as FastifyReply
  return { request, reply }
}
