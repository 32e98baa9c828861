import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyBaseLogger } from 'fastify'
import type { GatewayConfig, LaneConfig } from '../../config/types.js'
import { buildIndexes } from '../../config/indexes.js'
import type { UpstreamRegistry } from '../../upstream/registry.js'
import type { Dispatch, DispatchEntry, DispatchStore } from '../../store/dispatch-store.js'
import { callLane } from './lane-client.js'
import { recordFanoutDispatch } from '../../observability/recorders.js'
import { createLimiter, type Limiter } from './limiter.js'
import { fanoutSettingsOf, type FanoutSettings } from './settings.js'

export interface DeliveryDeps {
  store: DispatchStore
  currentConfig: () => GatewayConfig
  logger: FastifyBaseLogger
  /** The lanes' upstreams, shared with the live relay (each lane's socket cap covers both). */
  lanes: UpstreamRegistry<LaneConfig>
}

/**
 * Sends a committed dispatch's outbox rows to the lanes and records each store's outcome.
 * - Each pending store is its own task with its own retry loop (exponential backoff on retryable failures); the
 *   `concurrency` limiter bounds calls in flight, and a task waiting out its backoff holds no slot, so a failing
 *   or slow lane never holds up the healthy ones.
 * - Every apply carries `Idempotency-Key: <dispatch_id>:<store_org_id>`: a resend after a crash (the lane applied
 *   but we never recorded it) is dropped by the lane.
 * - A worker holds a lease on the dispatch while delivering and renews it; `sweep` resumes `committing`
 *   dispatches whose lease ran out (the worker died), at start and every `recovery.sweep_interval_ms`.
 */
export interface DeliveryRunner {
  /** Delivers a `committing` dispatch's pending stores (joins the run already in progress, if any). */
  deliver (dispatchId: string): Promise<void>
  /** Claims and resumes dispatches whose lease expired. */
  sweep (): Promise<void>
  /** Sweeps now and then periodically. */
  start (): void
  /** Stops sweeping, aborts lane calls and backoffs (rows stay pending), and waits for the workers to stop. */
  close (): Promise<void>
}

const SWEEP_BATCH = 20

export function createDeliveryRunner (deps: DeliveryDeps): DeliveryRunner {
  const { store, logger } = deps
  const active = new Map<string, Promise<void>>()
  const shutdown = new AbortController()
  let sweepTimer: NodeJS.Timeout | undefined
  let sweeping: Promise<void> | undefined

  const settings = (): FanoutSettings => fanoutSettingsOf(deps.currentConfig())
  const iso = (): string => new Date().toISOString()

  function deliver (dispatchId: string): Promise<void> {
    const running = active.get(dispatchId)
    if (running !== undefined) return running
    const run = runDispatch(dispatchId)
      .catch((error: unknown) => { logger.error({ err: error, dispatch_id: dispatchId }, 'fan-out delivery failed; it resumes when its lease expires') })
      .finally(() => { active.delete(dispatchId) })
    active.set(dispatchId, run)
    return run
  }

  async function runDispatch (dispatchId: string): Promise<void> {
    const dispatch = await store.get(dispatchId)
    if (dispatch === undefined || dispatch.status !== 'committing') return
    const current = settings()
    const leaseMs = current.recovery.lease_ms
    const renew = setInterval(() => {
      store.renewLease(dispatchId, Date.now() + leaseMs).catch((error: unknown) => {
        logger.warn({ err: error, dispatch_id: dispatchId }, 'fan-out lease renewal failed')
      })
    }, Math.max(1, Math.floor(leaseMs / 3)))
    renew.unref()
    try {
      const limit = createLimiter(current.concurrency)
      const pending = dispatch.stores.filter((s) => s.delivery?.status === 'pending')
      await Promise.all(pending.map((entry) => deliverStore(dispatch, entry, limit)))
      if (shutdown.signal.aborted) return
      const status = await store.finish(dispatchId, iso())
      if (status !== undefined) logger.info({ dispatch_id: dispatchId, status }, 'fan-out dispatch settled')
      if (status !== undefined) recordFanoutDispatch(status)
    } finally {
      clearInterval(renew)
    }
  }

  async function deliverStore (dispatch: Dispatch, entry: DispatchEntry, limit: Limiter): Promise<void> {
    const { dispatchId, operationType, payload } = dispatch
    const storeOrgId = entry.storeOrgId
    let attempts = entry.delivery?.attempts ?? 0
    const record = (state: Parameters<DispatchStore['recordDelivery']>[2]): Promise<void> =>
      store.recordDelivery(dispatchId, storeOrgId, state, iso())

    while (!shutdown.signal.aborted) {
      const current = settings()
      const operation = current.operations[operationType]
      // The CURRENT config's lane (the store-access rule's): a lane a reload moved is reached at its new address.
      const lane = buildIndexes(deps.currentConfig()).laneOf(storeOrgId)
      if (operation === undefined || lane === undefined) {
        // The config changed since the preview: nothing to send to. Final, not retried.
        const message = operation === undefined
          ? `Operation ${operationType} is no longer registered.`
          : 'The store no longer has an active install with a lane.'
        await record({ status: 'failed', attempts, error: { error: operation === undefined ? 'fanout_operation_not_found' : 'store_not_found', message } })
        return
      }
      attempts++
      const result = await limit(() => callLane(deps.lanes.get(storeOrgId, lane), operation.apply_path, {
        dispatch_id: dispatchId,
        store_org_id: storeOrgId,
        operation_type: operationType,
        payload,
      }, { timeoutMs: current.lane_timeout_ms, idempotencyKey: `${dispatchId}:${storeOrgId}`, signal: shutdown.signal }))
      // Shutting down: leave the row pending (the lane may or may not have applied; the resend is deduped).
      if (shutdown.signal.aborted) return
      if (result.ok) {
        await record({ status: 'applied', attempts, result: result.body })
        return
      }
      if (!result.retryable || attempts >= current.retry.attempts) {
        await record({ status: 'failed', attempts, error: { ...result.failure } })
        logger.warn({ dispatch_id: dispatchId, store_org_id: storeOrgId, attempts, upstream_status: result.failure.upstream_status, upstream_failure: result.failure.upstream_failure }, 'fan-out store failed')
        return
      }
      await record({ status: 'pending', attempts, error: { ...result.failure } })
      const delay = Math.min(current.retry.max_delay_ms, current.retry.base_delay_ms * 2 ** (attempts - 1))
      try {
        await sleep(delay, undefined, { signal: shutdown.signal })
      } catch {
        return
      }
    }
  }

  async function sweepOnce (): Promise<void> {
    // A reload removed the fan-out block: its routes answer 404 and nothing is resumed (the dispatches stay in the
    // outbox) until a reload brings the block back or the gateway restarts without it.
    if (deps.currentConfig().services.fanout === undefined) return
    const now = Date.now()
    const ids = await store.claimExpired(now, now + settings().recovery.lease_ms, SWEEP_BATCH)
    for (const id of ids) {
      logger.info({ dispatch_id: id }, 'resuming fan-out delivery')
      void deliver(id)
    }
  }

  function sweep (): Promise<void> {
    // One sweep at a time; a sweep asked for while one runs joins it.
    sweeping ??= sweepOnce()
      .catch((error: unknown) => { logger.error({ err: error }, 'fan-out recovery sweep failed') })
      .finally(() => { sweeping = undefined })
    return sweeping
  }

  return {
    deliver,
    sweep,
    start () {
      void sweep()
      sweepTimer = setInterval(() => { void sweep() }, settings().recovery.sweep_interval_ms)
      sweepTimer.unref()
    },
    async close () {
      if (sweepTimer !== undefined) clearInterval(sweepTimer)
      shutdown.abort()
      await sweeping
      await Promise.all([...active.values()])
    },
  }
}
