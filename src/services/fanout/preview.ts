import { ulid } from 'ulid'
import type { LaneConfig } from '../../config/types.js'
import type { UpstreamTrace } from '../../upstream/headers.js'
import type { UpstreamRegistry } from '../../upstream/registry.js'
import type { Snapshot } from '../../runtime/snapshot.js'
import { GatewayError } from '../../plugin/gateway-error.js'
import type { Principal } from '../../runtime/request-context.js'
import type { Dispatch, DispatchStore, PreviewOutcome } from '../../store/dispatch-store.js'
import { callLane } from './lane-client.js'
import { createLimiter } from './limiter.js'
import { validatePayload } from './payload-validator.js'
import { fanoutSettingsOf, type FanoutOperation } from './settings.js'

interface PreviewBody {
  operation_type: string
  payload: unknown
  store_org_ids: string[]
}

const BODY_KEYS = new Set(['operation_type', 'payload', 'store_org_ids'])

/**
 * Checks a preview request and previews it at every lane. Checks run cheapest first and all before any lane is
 * contacted: body shape (422 validation_failed) → operation registered (404) → store count (400) → payload size
 * (413) → payload schema (422) → every store reachable by the caller with an active install and lane (422
 * fanout_store_out_of_scope listing ALL offending stores; nothing is narrowed or dispatched). Then each lane
 * previews (one attempt, `lane_timeout_ms`); any failed store makes the dispatch `preview_failed`, still a 200.
 */
export async function previewDispatch (body: unknown, principal: Principal, snapshot: Snapshot, store: DispatchStore, lanes: UpstreamRegistry<LaneConfig>,
  trace?: UpstreamTrace): Promise<Dispatch> {
  const request = checkBody(body)
  const settings = fanoutSettingsOf(snapshot.config)
  const operationType = request.operation_type
  const operation = Object.hasOwn(settings.operations, operationType) ? settings.operations[operationType] : undefined
  if (operation === undefined) {
    throw new GatewayError('fanout_operation_not_found', {
      message: `No fan-out operation named "${operationType}" is registered.`,
      fields: { operation_type: operationType },
    })
  }
  const storeIds = request.store_org_ids
  if (storeIds.length > settings.max_stores) {
    throw new GatewayError('fanout_too_many_stores', {
      message: `A dispatch targets at most ${settings.max_stores} stores; this one lists ${storeIds.length}.`,
      fields: { operation_type: operationType, max_stores: settings.max_stores, store_count: storeIds.length },
    })
  }
  const payloadBytes = Buffer.byteLength(JSON.stringify(request.payload) ?? '')
  if (payloadBytes > settings.max_payload_bytes) {
    throw new GatewayError('payload_too_large', {
      message: `The payload is ${payloadBytes} bytes; this operation accepts at most ${settings.max_payload_bytes}.`,
      fields: { max_payload_bytes: settings.max_payload_bytes },
    })
  }
  const errors = validatePayload(operation.payload_schema, request.payload)
  if (Object.keys(errors).length > 0) {
    throw new GatewayError('fanout_payload_validation_failed', {
      message: `The payload does not match the schema of ${operationType}.`,
      fields: { operation_type: operationType, errors },
    })
  }
  // The store-access rule (ConfigIndexes.access): reachable by the caller, installed, with a lane.
  const offending = storeIds.filter((id) => snapshot.indexes.access(principal.organizationId, id)?.lane === undefined)
  if (offending.length > 0) {
    throw new GatewayError('fanout_store_out_of_scope', {
      message: offending.length === 1
        ? '1 of the stores is outside the caller\'s scope or has no active install; nothing was dispatched.'
        : `${offending.length} of the stores are outside the caller's scope or have no active install; nothing was dispatched.`,
      fields: { operation_type: operationType, offending_stores: offending },
    })
  }

  const dispatchId = ulid()
  const previews = await previewAtLanes(dispatchId, operationType, operation, request.payload, storeIds, snapshot, settings, lanes, trace)
  const failed = previews.some((p) => p.status === 'failed')
  const created: Dispatch = {
    dispatchId,
    ownerOrgId: principal.organizationId,
    clientId: principal.clientId,
    operationType,
    payload: request.payload,
    status: failed ? 'preview_failed' : 'previewed',
    createdAt: new Date().toISOString(),
    committedAt: null,
    completedAt: null,
    stores: storeIds.map((storeOrgId, i) => ({ storeOrgId, preview: previews[i] as PreviewOutcome, delivery: null })),
  }
  await store.create({
    dispatchId,
    ownerOrgId: created.ownerOrgId,
    clientId: created.clientId,
    operationType,
    payload: created.payload,
    status: created.status as 'previewed' | 'preview_failed',
    createdAt: created.createdAt,
    stores: created.stores.map((s) => ({ storeOrgId: s.storeOrgId, preview: s.preview })),
  })
  return created
}

async function previewAtLanes (dispatchId: string, operationType: string, operation: FanoutOperation, payload: unknown,
  storeIds: string[], snapshot: Snapshot, settings: ReturnType<typeof fanoutSettingsOf>, lanes: UpstreamRegistry<LaneConfig>,
  trace: UpstreamTrace | undefined): Promise<PreviewOutcome[]> {
  const limit = createLimiter(settings.concurrency)
  return Promise.all(storeIds.map((storeOrgId) => limit(async (): Promise<PreviewOutcome> => {
    // The scope check above guarantees a lane.
    const lane = snapshot.indexes.laneOf(storeOrgId)
    if (lane === undefined) return { status: 'failed', error: { error: 'store_not_found', message: 'The store has no lane.' } }
    const result = await callLane(lanes.get(storeOrgId, lane), operation.preview_path, {
      dispatch_id: dispatchId,
      store_org_id: storeOrgId,
      operation_type: operationType,
      payload,
    }, { timeoutMs: settings.lane_timeout_ms, trace })
    return result.ok ? { status: 'ok', result: result.body } : { status: 'failed', error: { ...result.failure } }
  })))
}

function checkBody (body: unknown): PreviewBody {
  const invalid = (field: string, message: string): GatewayError => new GatewayError('validation_failed', {
    message: `The body must be {operation_type, payload, store_org_ids}: ${field} ${message}.`,
    fields: { errors: { [field]: [message] } },
  })
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('body', 'must be a JSON object')
  const record = body as Record<string, unknown>
  for (const key of Object.keys(record)) if (!BODY_KEYS.has(key)) throw invalid(key, 'is not allowed')
  const { operation_type: operationType, payload, store_org_ids: storeIds } = record
  if (typeof operationType !== 'string' || operationType.length === 0) {
    throw invalid('operation_type', operationType === undefined ? 'is required' : 'must be a non-empty string')
  }
  if (payload === undefined) throw invalid('payload', 'is required')
  if (!Array.isArray(storeIds)) throw invalid('store_org_ids', storeIds === undefined ? 'is required' : 'must be an array')
  if (storeIds.length === 0) throw invalid('store_org_ids', 'must list at least one store')
  if (!storeIds.every((id): id is string => typeof id === 'string')) throw invalid('store_org_ids', 'must hold only strings')
  if (new Set(storeIds).size !== storeIds.length) throw invalid('store_org_ids', 'must not list a store twice')
  return { operation_type: operationType, payload, store_org_ids: storeIds }
}
