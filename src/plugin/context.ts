import type { FastifyRequest } from 'fastify'
import type { CatalogueEntry, ErrorCode } from './catalogue.js'
import { declaredError, GatewayError, PolicyAnswer } from './gateway-error.js'
import type { Principal } from './request-state.js'
import type { Refusal } from './step.js'
import { addHeadHook, addSentHook, RESPONSE_BODY_LIMIT } from './response-phase.js'
import type { PolicyContext, PolicyPlugin, RefuseOptions } from './policy.js'
import { addResponseBodyHook, readRequestBody, setRequestBody } from './body-phase.js'
import { verifiedClientCertificate, type ClientCertificate } from './client-certificate.js'

/**
 * The route-level facts a context is built from: the route, and the config and the gateway's resources as the
 * contract's narrow views (`settings`, `reachStore`, `tokens`, `limiter`, ...), which the pipeline builds.
 */
export type RouteFacts = Omit<PolicyContext, 'refuse' | 'principal' | 'setPrincipal' | 'answer' | 'onResponseHead' | 'onResponseSent' | 'clientCertificate' | 'readRequestBody' | 'setRequestBody' | 'onResponseBody'>

/**
 * The context one policy's `create` gets for one route. `refuse` turns the policy's own `errors` entries into
 * catalogue-shaped entries once, here, so a refusal costs what `new GatewayError` costs: one property read, no
 * Map lookup. Codes not in the policy's map are catalogued codes (the loader has checked they do not clash).
 */
export function policyContext (plugin: PolicyPlugin, facts: RouteFacts): PolicyContext {
  const own = ownEntries(plugin)
  return {
    ...facts,
    refuse: own === undefined
      ? function refuseCatalogued (code: string, options?: RefuseOptions): Refusal {
        return new GatewayError(code as ErrorCode, options)
      }
      : function refuse (code: string, options?: RefuseOptions): Refusal {
        const entry = own[code]
        return entry === undefined ? new GatewayError(code as ErrorCode, options) : declaredError(code, entry, options)
      },
    principal: principalOf,
    setPrincipal,
    answer: answerWith,
    onResponseHead: addHeadHook,
    onResponseSent: addSentHook,
    clientCertificate: clientCertificateOf,
    readRequestBody,
    setRequestBody,
    onResponseBody: addResponseBodyHook,
  }
}

function clientCertificateOf (request: FastifyRequest): ClientCertificate | undefined {
  return verifiedClientCertificate(request.raw.socket)
}

function answerWith (status: number, headers: Record<string, string>, body?: string | Buffer): Refusal {
  if (body !== undefined) {
    const size = typeof body === 'string' ? Buffer.byteLength(body) : body.length
    if (size > RESPONSE_BODY_LIMIT) throw new RangeError(`a policy's answer is at most ${RESPONSE_BODY_LIMIT} bytes (given ${size})`)
  }
  return new PolicyAnswer(status, headers, body)
}

function principalOf (request: FastifyRequest): Principal | undefined {
  return request.gw.principal
}

function setPrincipal (request: FastifyRequest, principal: Principal): void {
  request.gw.principal = principal
}

const entriesByPlugin = new WeakMap<PolicyPlugin, Record<string, CatalogueEntry>>()

/** A plugin's `errors` map as catalogue entries (`shape: 'code'`), built once per plugin object. */
function ownEntries (plugin: PolicyPlugin): Record<string, CatalogueEntry> | undefined {
  if (plugin.errors === undefined) return undefined
  let entries = entriesByPlugin.get(plugin)
  if (entries === undefined) {
    entries = Object.create(null) as Record<string, CatalogueEntry>
    for (const [code, declared] of Object.entries(plugin.errors as Record<string, { status: number, message: string }>)) {
      entries[code] = { status: declared.status, message: declared.message, shape: 'code' }
    }
    entriesByPlugin.set(plugin, entries)
  }
  return entries
}
