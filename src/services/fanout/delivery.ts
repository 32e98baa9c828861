import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyBaseLogger } from 'fastify'
import type { GatewayConfig, LaneConfig } from '../../config/types.js'
import { buildIndexes } from '../../config/indexes.js'
import type { UpstreamRegistry } from '../../upstream/registry.js'
import type { Dispatch, DispatchEntry, DispatchStore } from '../../store/dispatch-store.js'
import { callLane } from './lane-client.js'
import { recordFanoutDispatch } from '../../observability/recorders.js'
import { backgroundTrace, type BackgroundTrace, type TraceContext } from '../../observability/trace-context.js'
import { createLimiter, type Limiter } from './limiter.js'
import { fanoutSettingsOf, type FanoutOperation, type FanoutSettings } from './settings.js'

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
  /**
   * Delivers a `committing` dispatch's pending stores (joins the run already in progress, if any). Its lane calls
   * are traced under `trace` (the commit request's), else in a trace of their own.
   */
  deliver (dispatchId: string, trace?: TraceContext): Promise<void>
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

  function deliver (dispatchId: string, trace?: TraceContext): Promise<void> {
    const running = active.get(dispatchId)
    if (running !== undefined) return running
    const run = runDispatch(dispatchId, trace)
      .catch((error: unknown) => { logger.error({ err: error, dispatch_id: dispatchId }, 'fan-out delivery failed; it resumes when its lease expires') })
      .finally(() => { active.delete(dispatchId) })
    active.set(dispatchId, run)
    return run
  }

  async function runDispatch (dispatchId: string, parentTrace: TraceContext | undefined): Promise<void> {
    const dispatch = await store.get(dispatchId)
    if (dispatch === undefined || dispatch.status !== 'committing') return
    const current = settings()
    const releaseLease = holdLease(deps, dispatchId, current.recovery.lease_ms)
    try {
      const limit = createLimiter(current.concurrency)
      const pending = dispatch.stores.filter((s) => s.delivery?.status === 'pending')
      const run = { signal: shutdown.signal, limit, trace: backgroundTrace(parentTrace) }
      await Promise.all(pending.map((entry) => deliverStore(deps, run, dispatch, entry)))
      if (shutdown.signal.aborted) return
      const status = await store.finish(dispatchId, iso())
      if (status !== undefined) logger.info({ dispatch_id: dispatchId, status }, 'fan-out dispatch settled')
      if (status !== undefined) recordFanoutDispatch(status)
    } finally {
      releaseLease()
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

const iso = (): string => new Date().toISOString()

/** Renews the worker's lease on a dispatch every third of `leaseMs` while it delivers; returns the release. */
function holdLease (deps: DeliveryDeps, dispatchId: string, leaseMs: number): () => void {
  const renew = setInterval(() => {
    deps.store.renewLease(dispatchId, Date.now() + leaseMs).catch((error: unknown) => {
      deps.logger.warn({ err: error, dispatch_id: dispatchId }, 'fan-out lease renewal failed')
    })
  }, Math.max(1, Math.floor(leaseMs / 3)))
  renew.unref()
  return () => { clearInterval(renew) }
}

/** What every store's delivery in one run of a dispatch shares: the shutdown signal, the concurrency limit, the trace. */
interface DeliveryRun {
  readonly signal: AbortSignal
  readonly limit: Limiter
  /** Each lane call sends its attempt's span as `traceparent` (a CLIENT span per attempt while spans are exported). */
  readonly trace: BackgroundTrace
}

/**
 * One store's delivery: find the operation and the store's lane in the CURRENT config → apply at the lane → record
 * the outcome; a retryable failure is recorded pending and retried after an exponential backoff.
 */
async function deliverStore (deps: DeliveryDeps, run: DeliveryRun, dispatch: Dispatch, entry: DispatchEntry): Promise<void> {
  const { signal, limit, trace } = run
  const { dispatchId, operationType, payload } = dispatch
  const storeOrgId = entry.storeOrgId
  let attempts = entry.delivery?.attempts ?? 0
  const record = (state: Parameters<DispatchStore['recordDelivery']>[2]): Promise<void> =>
    deps.store.recordDelivery(dispatchId, storeOrgId, state, iso())

  while (!signal.aborted) {
    const current = fanoutSettingsOf(deps.currentConfig())
    const target = deliveryTarget(deps, current, operationType, storeOrgId)
    if ('gone' in target) {
      await record({ status: 'failed', attempts, error: target.gone })
      return
    }
    attempts++
    const result = await limit(() => callLane(deps.lanes.get(storeOrgId, target.lane), target.operation.apply_path, {
      dispatch_id: dispatchId,
      store_org_id: storeOrgId,
      operation_type: operationType,
      payload,
    }, { timeoutMs: current.lane_timeout_ms, idempotencyKey: `${dispatchId}:${storeOrgId}`, signal, trace }))
    // Shutting down: leave the row pending (the lane may or may not have applied; the resend is deduped).
    if (signal.aborted) return
    if (result.ok) {
      await record({ status: 'applied', attempts, result: result.body })
      return
    }
    if (!result.retryable || attempts >= current.retry.attempts) {
      await record({ status: 'failed', attempts, error: { ...result.failure } })
      deps.logger.warn({ dispatch_id: dispatchId, store_org_id: storeOrgId, attempts, upstream_status: result.failure.upstream_status, upstream_failure: result.failure.upstream_failure }, 'fan-out store failed')
      return
    }
    await record({ status: 'pending', attempts, error: { ...result.failure } })
    try {
      await sleep(Math.min(current.retry.max_delay_ms, current.retry.base_delay_ms * 2 ** (attempts - 1)), undefined, { signal })
    } catch {
      return
    }
  }
}

/**
 * The operation and the store's lane in the current config (the store-access rule's lane: one a reload moved is
 * reached at its new address), or why there is nothing to send to any more: final, not retried.
 */
function deliveryTarget (deps: DeliveryDeps, current: FanoutSettings, operationType: string, storeOrgId: string):
  { operation: FanoutOperation, lane: LaneConfig } | { gone: { error: string, message: string } } {
  const operation = current.operations[operationType]
  if (operation === undefined) {
    return { gone: { error: 'fanout_operation_not_found', message: `Operation ${operationType} is no longer registered.` } }
  }
  const lane = buildIndexes(deps.currentConfig()).laneOf(storeOrgId)
  if (lane === undefined) return { gone: { error: 'store_not_found', message: 'The store no longer has an active install with a lane.' } }
  return { operation, lane }
}
