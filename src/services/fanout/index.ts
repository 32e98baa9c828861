import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { GatewayError } from '../../plugin/gateway-error.js'
import { markLongLived } from '../../observability/long-lived.js'
import { traceOf } from '../../observability/trace-context.js'
import type { Principal } from '../../runtime/request-context.js'
import { isFinalCommitStatus } from '../../store/dispatch-store.js'
import type { ServiceConfig } from '../../config/types.js'
import type { RouteDeclaration, RouteImplementation, ServiceModule, ServiceSettingProblem } from '../service-module.js'
import { createDeliveryRunner } from './delivery.js'
import { schemaProblem } from './payload-validator.js'
import { previewDispatch } from './preview.js'
import { renderDispatch, renderPreview } from './render-dispatch.js'
import { blockSettings } from '../service-settings.js'
import { FanoutSettingsSchema, fanoutSettingsOf, fanoutSettingsSchema } from './settings.js'

/** The routes (ids are the YAML keys under `services.fanout.routes`). */
export const fanoutRoutes: readonly RouteDeclaration[] = [
  {
    id: 'preview',
    method: 'POST',
    url: '/preview',
    description: 'Previews an operation at each store\'s lane and records the dispatch. Scope: exchange:fanout.preview.',
    scopes: ['exchange:fanout.preview'],
    body: previewBody,
    errors: ['validation_failed', 'fanout_operation_not_found', 'fanout_too_many_stores', 'payload_too_large', 'fanout_payload_validation_failed', 'fanout_store_out_of_scope'],
  },
  {
    id: 'commit',
    method: 'POST',
    url: '/dispatches/:dispatch_id/commit',
    description: 'Commits a previewed dispatch exactly once: 200 when every store settled within commit_wait_ms, else 202 committing. Scope: exchange:fanout.commit.',
    scopes: ['exchange:fanout.commit'],
    errors: ['fanout_dispatch_not_found', 'fanout_not_previewed'],
  },
  {
    id: 'get',
    method: 'GET',
    url: '/dispatches/:dispatch_id',
    description: 'A dispatch\'s status with each store\'s preview and delivery. Scope: exchange:fanout.preview.',
    scopes: ['exchange:fanout.preview'],
    errors: ['fanout_dispatch_not_found'],
  },
]

/** The preview body: one of the registered operations, its payload checked by that operation's payload_schema. */
function previewBody (settings: ServiceConfig): Record<string, unknown> {
  const operations = Object.entries(blockSettings(settings, FanoutSettingsSchema)?.operations ?? {})
  return {
    description: 'Previews one registered operation at the listed stores.',
    oneOf: operations.map(([name, operation]) => ({
      type: 'object',
      title: name,
      description: operation.description,
      additionalProperties: false,
      required: ['operation_type', 'payload', 'store_org_ids'],
      properties: {
        operation_type: { const: name },
        payload: operation.payload_schema,
        store_org_ids: { type: 'array', items: { type: 'string' }, minItems: 1, description: 'Stores of the caller\'s tree to preview at.' },
      },
    })),
  }
}

// ULIDs: anything else cannot name a dispatch, so it is answered 404 without a store lookup.
const DISPATCH_ID = /^[0-9A-HJKMNP-TV-Z]{26}$/

/**
 * Multi-store fan-out with preview and commit. Routes: `preview` POST /preview, `commit` POST
 * /dispatches/:dispatch_id/commit, `get` GET /dispatches/:dispatch_id. Suggested chains: `auth` → `token-type`
 * → `scope: exchange:fanout.preview` (preview, get) / `exchange:fanout.commit` (commit). A dispatch belongs to the
 * caller's organization; other organizations get 404 fanout_dispatch_not_found for it.
 */
export const fanoutService: ServiceModule = {
  name: 'fanout',
  description: 'Multi-store fan-out operations: preview at every lane, then commit exactly once through a durable outbox.',
  routes: fanoutRoutes,
  settingsSchema: fanoutSettingsSchema,

  check (settings) {
    const problems: ServiceSettingProblem[] = []
    const operations = blockSettings(settings, FanoutSettingsSchema)?.operations ?? {}
    for (const [name, operation] of Object.entries(operations)) {
      const problem = schemaProblem(operation.payload_schema)
      if (problem !== undefined) problems.push({ path: `operations.${name}.payload_schema`, message: `not a valid JSON Schema: ${problem}` })
    }
    return problems
  },

  build (deps) {
    const store = deps.shared.store.dispatches
    const lanes = deps.shared.upstreams.lanes
    const runner = createDeliveryRunner({ store, currentConfig: deps.currentConfig, logger: deps.shared.logger, lanes })
    runner.start()

    const preview: RouteImplementation = {
      handler: async function previewFanout (request: FastifyRequest, reply: FastifyReply) {
        // Waits on every store's lane: timed apart from request latency.
        markLongLived(reply.raw)
        const dispatch = await previewDispatch(request.body, principalOf(request), request.gw.snapshot, store, lanes, traceOf(request.raw))
        return renderPreview(dispatch)
      },
    }

    const commit: RouteImplementation = {
      handler: async function commitFanout (request: FastifyRequest, reply: FastifyReply) {
        markLongLived(reply.raw)
        const principal = principalOf(request)
        const dispatchId = dispatchIdOf(request)
        const settings = fanoutSettingsOf(request.gw.snapshot.config)
        const now = new Date()
        const gate = await store.beginCommit(dispatchId, principal.organizationId, now.toISOString(), now.getTime() + settings.recovery.lease_ms)
        if (gate.outcome === 'not_found') throw dispatchNotFound(dispatchId)
        if (gate.outcome === 'not_committable') {
          throw new GatewayError('fanout_not_previewed', {
            message: `Dispatch ${dispatchId} is ${gate.status}; only a previewed dispatch can be committed, once.`,
            fields: { dispatch_id: dispatchId, status: gate.status },
          })
        }
        await settleWithin(runner.deliver(dispatchId, traceOf(request.raw)), settings.commit_wait_ms)
        const dispatch = await store.get(dispatchId)
        if (dispatch === undefined) throw dispatchNotFound(dispatchId)
        reply.code(isFinalCommitStatus(dispatch.status) ? 200 : 202)
        return renderDispatch(dispatch)
      },
    }

    const get: RouteImplementation = {
      handler: async function getFanout (request: FastifyRequest) {
        const principal = principalOf(request)
        const dispatchId = dispatchIdOf(request)
        const dispatch = await store.get(dispatchId)
        if (dispatch === undefined || dispatch.ownerOrgId !== principal.organizationId) throw dispatchNotFound(dispatchId)
        return renderDispatch(dispatch)
      },
    }

    return { handlers: { preview, commit, get }, close: () => runner.close() }
  },
}

function principalOf (request: FastifyRequest): Principal {
  const principal = request.gw.principal
  // The route's chain must run `auth`; without it there is no organization to scope dispatches by.
  if (principal === undefined) throw new GatewayError('unauthenticated')
  return principal
}

function dispatchIdOf (request: FastifyRequest): string {
  const id = (request.params as { dispatch_id?: string }).dispatch_id ?? ''
  if (!DISPATCH_ID.test(id)) throw dispatchNotFound(id)
  return id
}

function dispatchNotFound (dispatchId: string): GatewayError {
  return new GatewayError('fanout_dispatch_not_found', {
    message: `No dispatch ${dispatchId} is visible to this organization.`,
    fields: { dispatch_id: dispatchId },
  })
}

/** Waits for `work` at most `ms`; the work goes on afterwards either way. */
async function settleWithin (work: Promise<void>, ms: number): Promise<void> {
  const timer = new AbortController()
  try {
    await Promise.race([work, sleep(ms, undefined, { signal: timer.signal, ref: false }).catch(() => {})])
  } finally {
    timer.abort()
  }
}

export default fanoutService
