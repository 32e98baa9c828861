/**
 * Durable fan-out dispatches: the dispatch, each store's preview outcome, and each store's delivery state. The
 * delivery rows double as the outbox: `beginCommit` moves a dispatch from `previewed` to `committing` AND marks
 * every store `pending` in one transaction, before any lane is contacted, so a crash at any later point leaves a
 * durable list of what still has to be sent. Implemented for SQLite (`sqlite/dispatch-store.ts`) and PostgreSQL
 * (`postgres/dispatch-store.ts`) with the same behaviour; test/e2e/fanout-dispatch-store.test.ts runs one suite
 * against both.
 */

/**
 * Dispatch lifecycle: `previewed` | `preview_failed` (after preview) → `committing` (commit won the conditional
 * update) → `committed` (every store applied) | `partially_failed` (at least one store did not apply).
 */
export type DispatchStatus = 'previewed' | 'preview_failed' | 'committing' | 'committed' | 'partially_failed'

/** A store's delivery (outbox) state: `pending` until the lane applied it (`applied`) or it gave up (`failed`). */
export type DeliveryStatus = 'pending' | 'applied' | 'failed'

/** What a lane answered to the preview: `ok` with its body, or `failed` with an upstream-error description. */
export interface PreviewOutcome {
  status: 'ok' | 'failed'
  result?: unknown
  error?: Record<string, unknown>
}

export interface DeliveryState {
  status: DeliveryStatus
  /** Apply attempts made so far (kept across restarts, so a crash does not reset the retry budget). */
  attempts: number
  /** The lane's body when it applied. */
  result?: unknown
  /** The last failure (also kept while retrying). */
  error?: Record<string, unknown>
  /** ISO 8601 time of the last change. */
  updatedAt: string
}

export interface DispatchEntry {
  storeOrgId: string
  preview: PreviewOutcome
  /** Null until the dispatch is committed. */
  delivery: DeliveryState | null
}

export interface Dispatch {
  dispatchId: string
  /** Organization of the caller that previewed it; only that organization may read or commit it. */
  ownerOrgId: string
  clientId: string
  operationType: string
  payload: unknown
  status: DispatchStatus
  createdAt: string
  committedAt: string | null
  completedAt: string | null
  /** In the order the caller listed them. */
  stores: DispatchEntry[]
}

export interface NewDispatch {
  dispatchId: string
  ownerOrgId: string
  clientId: string
  operationType: string
  payload: unknown
  status: 'previewed' | 'preview_failed'
  createdAt: string
  stores: { storeOrgId: string, preview: PreviewOutcome }[]
}

export type BeginCommitResult =
  | { outcome: 'committing', dispatch: Dispatch }
  | { outcome: 'not_found' }
  | { outcome: 'not_committable', status: DispatchStatus }

export interface DispatchStore {
  create (dispatch: NewDispatch): Promise<void>
  get (dispatchId: string): Promise<Dispatch | undefined>
  /**
   * The commit gate. Atomically: if the dispatch belongs to `ownerOrgId` and is `previewed`, set it `committing`
   * (with `committedAt = now` and a delivery lease until `leaseUntil`, ms since epoch) and mark every store
   * `pending`. Exactly one of any number of concurrent callers gets `committing`.
   */
  beginCommit (dispatchId: string, ownerOrgId: string, now: string, leaseUntil: number): Promise<BeginCommitResult>
  /**
   * Claims up to `limit` `committing` dispatches whose lease ended before `now` (their worker died), extending
   * each lease to `leaseUntil`. Concurrent claimers (other instances) never get the same dispatch.
   */
  claimExpired (now: number, leaseUntil: number, limit: number): Promise<string[]>
  /** Extends the lease of a dispatch this worker is delivering. */
  renewLease (dispatchId: string, leaseUntil: number): Promise<void>
  /** Records a store's delivery progress; ignored unless the store is still `pending`. */
  recordDelivery (dispatchId: string, storeOrgId: string, state: Omit<DeliveryState, 'updatedAt'>, now: string): Promise<void>
  /**
   * Moves a `committing` dispatch to its final status, which is computed from the stores' delivery states:
   * `committed` when all applied, `partially_failed` otherwise. No-op (returns undefined) when a store is still
   * pending or the dispatch is not `committing`.
   */
  finish (dispatchId: string, now: string): Promise<DispatchStatus | undefined>
  /**
   * How many dispatches are in each status, and the `latest` most recently created (newest first, with their
   * stores): what the operator console shows. A read, never a lock.
   */
  summary (latest: number): Promise<DispatchSummary>
}

/** Dispatches by status and the latest ones (the operator console). */
export interface DispatchSummary {
  byStatus: Partial<Record<DispatchStatus, number>>
  latest: Dispatch[]
}

/** Whether a status is final for a committed dispatch. */
export function isFinalCommitStatus (status: DispatchStatus): boolean {
  return status === 'committed' || status === 'partially_failed'
}
