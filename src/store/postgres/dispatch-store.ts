import type { Pool, PoolClient } from 'pg'
import type {
  BeginCommitResult, DeliveryState, Dispatch, DispatchStatus, DispatchStore, NewDispatch, PreviewOutcome,
} from '../dispatch-store.js'
import { withTransaction } from './transaction.js'

interface DispatchRow {
  dispatch_id: string
  owner_org_id: string
  client_id: string
  operation_type: string
  payload: unknown
  status: DispatchStatus
  created_at: Date
  committed_at: Date | null
  completed_at: Date | null
}

interface StoreRow {
  store_org_id: string
  preview: PreviewOutcome
  delivery_status: DeliveryState['status'] | null
  attempts: number
  delivery_result: unknown
  delivery_error: Record<string, unknown> | null
  updated_at: Date | null
}

/**
 * DispatchStore over a pg Pool (several gateway instances may share the database). The commit gate is one
 * conditional UPDATE (row lock: concurrent commits queue on the row and all but one match zero rows); expired
 * leases are claimed with `FOR UPDATE SKIP LOCKED` so two instances never resume the same dispatch at once.
 * Its tables come from `postgresDispatchMigrations`, applied by the store's migration runner (`createPostgresStore`).
 */
export function createPostgresDispatchStore (pool: Pool): DispatchStore {
  return {
    create: async (d: NewDispatch) => insertDispatch(pool, d),
    get: async (dispatchId) => read(pool, dispatchId),
    beginCommit: async (dispatchId, ownerOrgId, now, leaseUntil) => beginCommit(pool, dispatchId, ownerOrgId, now, leaseUntil),

    async claimExpired (now, leaseUntil, limit) {
      const claimed = await pool.query<{ dispatch_id: string }>(`UPDATE fanout_dispatches SET lease_until = $1
        WHERE dispatch_id IN (
          SELECT dispatch_id FROM fanout_dispatches WHERE status = 'committing' AND lease_until < $2
          ORDER BY committed_at LIMIT $3 FOR UPDATE SKIP LOCKED)
        RETURNING dispatch_id`, [leaseUntil, now, limit])
      return claimed.rows.map((r) => r.dispatch_id)
    },

    async renewLease (dispatchId, leaseUntil) {
      await pool.query('UPDATE fanout_dispatches SET lease_until = $1 WHERE dispatch_id = $2', [leaseUntil, dispatchId])
    },

    async recordDelivery (dispatchId, storeOrgId, state, now) {
      await pool.query(`UPDATE fanout_dispatch_stores
        SET delivery_status = $1, attempts = $2, delivery_result = $3, delivery_error = $4, updated_at = $5
        WHERE dispatch_id = $6 AND store_org_id = $7 AND delivery_status = 'pending'`,
      [state.status, state.attempts, json(state.result), json(state.error), now, dispatchId, storeOrgId])
    },

    async summary (latest) {
      const counts = await pool.query<{ status: DispatchStatus, n: string }>('SELECT status, COUNT(*) AS n FROM fanout_dispatches GROUP BY status')
      const rows = await pool.query<DispatchRow>('SELECT * FROM fanout_dispatches ORDER BY created_at DESC, dispatch_id DESC LIMIT $1', [latest])
      const dispatches = await Promise.all(rows.rows.map((row) => read(pool, row.dispatch_id)))
      return {
        byStatus: Object.fromEntries(counts.rows.map((r) => [r.status, Number(r.n)])),
        latest: dispatches.filter((d): d is Dispatch => d !== undefined),
      }
    },

    finish: async (dispatchId, now) => finishDispatch(pool, dispatchId, now),
  }
}

/** One dispatch with its stores, in their order. */
async function read (db: Pool | PoolClient, dispatchId: string): Promise<Dispatch | undefined> {
  const found = await db.query<DispatchRow>('SELECT * FROM fanout_dispatches WHERE dispatch_id = $1', [dispatchId])
  const row = found.rows[0]
  if (row === undefined) return undefined
  const stores = await db.query<StoreRow>(`SELECT store_org_id, preview, delivery_status, attempts, delivery_result,
    delivery_error, updated_at FROM fanout_dispatch_stores WHERE dispatch_id = $1 ORDER BY position`, [dispatchId])
  return toDispatch(row, stores.rows)
}

/** A new dispatch and its stores, in one transaction. */
async function insertDispatch (pool: Pool, d: NewDispatch): Promise<void> {
    await withTransaction(pool, async (client) => {
      await client.query(`INSERT INTO fanout_dispatches
        (dispatch_id, owner_org_id, client_id, operation_type, payload, status, created_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [d.dispatchId, d.ownerOrgId, d.clientId, d.operationType, JSON.stringify(d.payload), d.status, d.createdAt])
      await client.query(`INSERT INTO fanout_dispatch_stores (dispatch_id, position, store_org_id, preview)
        SELECT $1, ord - 1, store_org_id, preview
        FROM unnest($2::text[], $3::jsonb[]) WITH ORDINALITY AS s (store_org_id, preview, ord)`,
      [d.dispatchId, d.stores.map((s) => s.storeOrgId), d.stores.map((s) => JSON.stringify(s.preview))])
    })
  }

/** The commit gate: one conditional UPDATE; concurrent commits queue on the row lock and all but one match none. */
async function beginCommit (pool: Pool, dispatchId: string, ownerOrgId: string, now: string, leaseUntil: number): Promise<BeginCommitResult> {
    return withTransaction(pool, async (client) => {
      const gate = await client.query(`UPDATE fanout_dispatches SET status = 'committing', committed_at = $1, lease_until = $2
        WHERE dispatch_id = $3 AND owner_org_id = $4 AND status = 'previewed'`, [now, leaseUntil, dispatchId, ownerOrgId])
      if (gate.rowCount === 1) {
        await client.query(`UPDATE fanout_dispatch_stores SET delivery_status = 'pending', updated_at = $1
          WHERE dispatch_id = $2`, [now, dispatchId])
        return { outcome: 'committing', dispatch: await read(client, dispatchId) as Dispatch }
      }
      const found = await client.query<{ owner_org_id: string, status: DispatchStatus }>(
        'SELECT owner_org_id, status FROM fanout_dispatches WHERE dispatch_id = $1', [dispatchId])
      const row = found.rows[0]
      if (row === undefined || row.owner_org_id !== ownerOrgId) return { outcome: 'not_found' }
      return { outcome: 'not_committable', status: row.status }
    })
  }

/** The dispatch's final status once no store is pending; undefined while one is (or another finisher won). */
async function finishDispatch (pool: Pool, dispatchId: string, now: string): Promise<DispatchStatus | undefined> {
    return withTransaction(pool, async (client) => {
      // Lock the dispatch row first so two finishers serialize and the counts they read are current.
      const locked = await client.query('SELECT 1 FROM fanout_dispatches WHERE dispatch_id = $1 AND status = \'committing\' FOR UPDATE', [dispatchId])
      if (locked.rowCount !== 1) return undefined
      const counts = await client.query<{ pending: string, failed: string }>(`SELECT
        COUNT(*) FILTER (WHERE delivery_status IS NULL OR delivery_status = 'pending') AS pending,
        COUNT(*) FILTER (WHERE delivery_status = 'failed') AS failed
        FROM fanout_dispatch_stores WHERE dispatch_id = $1`, [dispatchId])
      const row = counts.rows[0]
      if (row === undefined || Number(row.pending) > 0) return undefined
      const status: DispatchStatus = Number(row.failed) > 0 ? 'partially_failed' : 'committed'
      await client.query('UPDATE fanout_dispatches SET status = $1, completed_at = $2 WHERE dispatch_id = $3', [status, now, dispatchId])
      return status
    })
  }

function json (value: unknown): string | null {
  return value === undefined ? null : JSON.stringify(value)
}

function iso (value: Date | null): string | null {
  return value === null ? null : value.toISOString()
}

function toDispatch (row: DispatchRow, stores: StoreRow[]): Dispatch {
  return {
    dispatchId: row.dispatch_id,
    ownerOrgId: row.owner_org_id,
    clientId: row.client_id,
    operationType: row.operation_type,
    payload: row.payload,
    status: row.status,
    createdAt: row.created_at.toISOString(),
    committedAt: iso(row.committed_at),
    completedAt: iso(row.completed_at),
    stores: stores.map((s) => ({
      storeOrgId: s.store_org_id,
      preview: s.preview,
      delivery: s.delivery_status === null
        ? null
        : {
            status: s.delivery_status,
            attempts: s.attempts,
            ...(s.delivery_result === null ? {} : { result: s.delivery_result }),
            ...(s.delivery_error === null ? {} : { error: s.delivery_error }),
            updatedAt: iso(s.updated_at) ?? iso(row.committed_at) ?? row.created_at.toISOString(),
          },
    })),
  }
}
