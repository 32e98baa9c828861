import type Database from 'better-sqlite3'
import type {
  BeginCommitResult, DeliveryState, Dispatch, DispatchStatus, DispatchStore, NewDispatch, PreviewOutcome,
} from '../dispatch-store.js'

interface DispatchRow {
  dispatch_id: string
  owner_org_id: string
  client_id: string
  operation_type: string
  payload: string
  status: DispatchStatus
  created_at: string
  committed_at: string | null
  completed_at: string | null
}

interface StoreRow {
  store_org_id: string
  preview: string
  delivery_status: DeliveryState['status'] | null
  attempts: number
  delivery_result: string | null
  delivery_error: string | null
  updated_at: string | null
}

/**
 * DispatchStore over better-sqlite3. Every method runs synchronously inside one SQLite transaction, so the
 * conditional updates are serialized by SQLite itself. Several processes may share the file (`server.workers`):
 * the read-then-write transactions are IMMEDIATE, taking the write lock (waiting up to busy_timeout) before
 * their first read. A DEFERRED one would read, then fail with SQLITE_BUSY_SNAPSHOT when another process wrote
 * in between, instead of waiting. Its tables come
 * from `sqliteDispatchMigrations`, applied by the store's migration runner (`createSqliteStore`).
 */
export function createSqliteDispatchStore (db: Database.Database): DispatchStore {

  const insertDispatch = db.prepare(`INSERT INTO fanout_dispatches
    (dispatch_id, owner_org_id, client_id, operation_type, payload, status, created_at)
    VALUES (?, ?, ?, ?, ?, ?, ?)`)
  const insertStore = db.prepare(`INSERT INTO fanout_dispatch_stores (dispatch_id, position, store_org_id, preview)
    VALUES (?, ?, ?, ?)`)
  const selectDispatch = db.prepare<[string], DispatchRow>('SELECT * FROM fanout_dispatches WHERE dispatch_id = ?')
  const selectStores = db.prepare<[string], StoreRow>(`SELECT store_org_id, preview, delivery_status, attempts,
    delivery_result, delivery_error, updated_at FROM fanout_dispatch_stores WHERE dispatch_id = ? ORDER BY position`)
  const commitGate = db.prepare(`UPDATE fanout_dispatches SET status = 'committing', committed_at = ?, lease_until = ?
    WHERE dispatch_id = ? AND owner_org_id = ? AND status = 'previewed'`)
  const markPending = db.prepare(`UPDATE fanout_dispatch_stores SET delivery_status = 'pending', updated_at = ?
    WHERE dispatch_id = ?`)
  const selectExpired = db.prepare<[number, number], { dispatch_id: string }>(`SELECT dispatch_id FROM fanout_dispatches
    WHERE status = 'committing' AND lease_until < ? ORDER BY committed_at LIMIT ?`)
  const setLease = db.prepare('UPDATE fanout_dispatches SET lease_until = ? WHERE dispatch_id = ?')
  const updateDelivery = db.prepare(`UPDATE fanout_dispatch_stores
    SET delivery_status = ?, attempts = ?, delivery_result = ?, delivery_error = ?, updated_at = ?
    WHERE dispatch_id = ? AND store_org_id = ? AND delivery_status = 'pending'`)
  const countStates = db.prepare<[string], { pending: number, failed: number }>(`SELECT
    COALESCE(SUM(CASE WHEN delivery_status IS NULL OR delivery_status = 'pending' THEN 1 ELSE 0 END), 0) AS pending,
    COALESCE(SUM(CASE WHEN delivery_status = 'failed' THEN 1 ELSE 0 END), 0) AS failed
    FROM fanout_dispatch_stores WHERE dispatch_id = ?`)
  const finishGate = db.prepare(`UPDATE fanout_dispatches SET status = ?, completed_at = ?
    WHERE dispatch_id = ? AND status = 'committing'`)

  const countByStatus = db.prepare<[], { status: DispatchStatus, n: number }>('SELECT status, COUNT(*) AS n FROM fanout_dispatches GROUP BY status')
  const selectLatest = db.prepare<[number], DispatchRow>('SELECT * FROM fanout_dispatches ORDER BY created_at DESC, dispatch_id DESC LIMIT ?')

  const read = (dispatchId: string): Dispatch | undefined => {
    const row = selectDispatch.get(dispatchId)
    return row === undefined ? undefined : toDispatch(row, selectStores.all(dispatchId))
  }

  const create = db.transaction((d: NewDispatch) => {
    insertDispatch.run(d.dispatchId, d.ownerOrgId, d.clientId, d.operationType, JSON.stringify(d.payload), d.status, d.createdAt)
    d.stores.forEach((s, position) => insertStore.run(d.dispatchId, position, s.storeOrgId, JSON.stringify(s.preview)))
  })

  const beginCommit = db.transaction((dispatchId: string, ownerOrgId: string, now: string, leaseUntil: number): BeginCommitResult => {
    if (commitGate.run(now, leaseUntil, dispatchId, ownerOrgId).changes === 1) {
      markPending.run(now, dispatchId)
      return { outcome: 'committing', dispatch: read(dispatchId) as Dispatch }
    }
    const row = selectDispatch.get(dispatchId)
    if (row === undefined || row.owner_org_id !== ownerOrgId) return { outcome: 'not_found' }
    return { outcome: 'not_committable', status: row.status }
  })

  const claimExpired = db.transaction((now: number, leaseUntil: number, limit: number): string[] => {
    const ids = selectExpired.all(now, limit).map((r) => r.dispatch_id)
    for (const id of ids) setLease.run(leaseUntil, id)
    return ids
  })

  const finish = db.transaction((dispatchId: string, now: string): DispatchStatus | undefined => {
    const counts = countStates.get(dispatchId)
    if (counts === undefined || counts.pending > 0) return undefined
    const status: DispatchStatus = counts.failed > 0 ? 'partially_failed' : 'committed'
    return finishGate.run(status, now, dispatchId).changes === 1 ? status : undefined
  })

  return {
    create: async (dispatch) => { create(dispatch) },
    get: async (dispatchId) => read(dispatchId),
    beginCommit: async (dispatchId, ownerOrgId, now, leaseUntil) => beginCommit.immediate(dispatchId, ownerOrgId, now, leaseUntil),
    claimExpired: async (now, leaseUntil, limit) => claimExpired.immediate(now, leaseUntil, limit),
    renewLease: async (dispatchId, leaseUntil) => { setLease.run(leaseUntil, dispatchId) },
    recordDelivery: async (dispatchId, storeOrgId, state, now) => {
      updateDelivery.run(state.status, state.attempts, json(state.result), json(state.error), now, dispatchId, storeOrgId)
    },
    finish: async (dispatchId, now) => finish.immediate(dispatchId, now),
    summary: async (latest) => ({
      byStatus: Object.fromEntries(countByStatus.all().map((r) => [r.status, r.n])),
      latest: selectLatest.all(latest).map((row) => toDispatch(row, selectStores.all(row.dispatch_id))),
    }),
  }
}

function json (value: unknown): string | null {
  return value === undefined ? null : JSON.stringify(value)
}

function toDispatch (row: DispatchRow, stores: StoreRow[]): Dispatch {
  return {
    dispatchId: row.dispatch_id,
    ownerOrgId: row.owner_org_id,
    clientId: row.client_id,
    operationType: row.operation_type,
    payload: JSON.parse(row.payload) as unknown,
    status: row.status,
    createdAt: row.created_at,
    committedAt: row.committed_at,
    completedAt: row.completed_at,
    stores: stores.map((s) => ({
      storeOrgId: s.store_org_id,
      preview: JSON.parse(s.preview) as PreviewOutcome,
      delivery: s.delivery_status === null
        ? null
        : {
            status: s.delivery_status,
            attempts: s.attempts,
            ...(s.delivery_result === null ? {} : { result: JSON.parse(s.delivery_result) as unknown }),
            ...(s.delivery_error === null ? {} : { error: JSON.parse(s.delivery_error) as Record<string, unknown> }),
            updatedAt: s.updated_at ?? row.committed_at ?? row.created_at,
          },
    })),
  }
}
