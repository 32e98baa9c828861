import type { Pool } from 'pg'
import type {
  PaymentIntentEvent, PaymentIntentStatus, PaymentIntentStore, TransitionResult,
} from '../payment-intent-store.js'
import { alreadyApplied, toPaymentIntent, type PaymentIntentRow } from '../payment-intent-row.js'
import { withTransaction } from './transaction.js'

/**
 * PaymentIntentStore over a pg Pool. A status change locks the row (`SELECT … FOR UPDATE`) and updates it only
 * from the allowed states, so concurrent changes from any number of gateway instances queue on the row lock and
 * exactly one of them wins.
 */
export function createPostgresPaymentIntentStore (pool: Pool): PaymentIntentStore {
  return {
    async create (intent) {
      return withTransaction(pool, async (client) => {
        const inserted = await client.query<PaymentIntentRow>(`INSERT INTO payment_intents (id, owner_org_id, client_id,
          amount, currency, status, capture_method, description, metadata, organization_id, connected_account_id,
          destination, client_secret, created_at, idempotency_ref)
          VALUES ($1, $2, $3, $4, $5, 'requires_payment_method', $6, $7, $8, $9, $10, $11, $12, $13, $14)
          ON CONFLICT (idempotency_ref) DO NOTHING RETURNING *`, [
          intent.id, intent.ownerOrgId, intent.clientId, intent.amount, intent.currency, intent.captureMethod,
          intent.description, JSON.stringify(intent.metadata), intent.organizationId, intent.connectedAccountId,
          intent.destination, intent.clientSecret, intent.createdAt, intent.idempotencyRef ?? null,
        ])
        if (inserted.rows.length === 0) {
          // Same idempotency reference already stored (a retry after a crash): that intent is the answer.
          const existing = await client.query<PaymentIntentRow>('SELECT * FROM payment_intents WHERE idempotency_ref = $1', [intent.idempotencyRef])
          return toPaymentIntent(existing.rows[0] as PaymentIntentRow)
        }
        await client.query('INSERT INTO payment_intent_events (intent_id, from_status, to_status, at) VALUES ($1, NULL, $2, $3)',
          [intent.id, 'requires_payment_method', intent.createdAt])
        return toPaymentIntent(inserted.rows[0] as PaymentIntentRow)
      })
    },

    async get (id, visibleTo) {
      const found = await pool.query<PaymentIntentRow>('SELECT * FROM payment_intents WHERE id = $1', [id])
      const row = found.rows[0]
      return row !== undefined && visibleTo.has(row.owner_org_id) ? toPaymentIntent(row) : undefined
    },

    async transition (id, visibleTo, change) {
      return withTransaction(pool, async (client): Promise<TransitionResult> => {
        const locked = await client.query<PaymentIntentRow>('SELECT * FROM payment_intents WHERE id = $1 FOR UPDATE', [id])
        const row = locked.rows[0]
        if (row === undefined || !visibleTo.has(row.owner_org_id)) return { outcome: 'not_found' }
        if (!change.from.includes(row.status)) {
          return alreadyApplied(row, change) ? { outcome: 'already_applied', intent: toPaymentIntent(row) } : { outcome: 'conflict', status: row.status }
        }
        const canceled = change.to === 'canceled'
        const updated = await client.query<PaymentIntentRow>(`UPDATE payment_intents
          SET status = $1, canceled_at = $2, cancellation_reason = $3, status_idempotency_ref = $4
          WHERE id = $5 AND status = ANY($6::text[]) RETURNING *`, [
          change.to, canceled ? change.at : row.canceled_at, canceled ? change.cancellationReason ?? null : row.cancellation_reason,
          change.idempotencyRef ?? null, id, [...change.from],
        ])
        const after = updated.rows[0]
        if (after === undefined) return { outcome: 'conflict', status: row.status }
        await client.query('INSERT INTO payment_intent_events (intent_id, from_status, to_status, at) VALUES ($1, $2, $3, $4)',
          [id, row.status, change.to, change.at])
        return { outcome: 'updated', intent: toPaymentIntent(after) }
      })
    },

    async events (id) {
      const found = await pool.query<{ intent_id: string, from_status: PaymentIntentStatus | null, to_status: PaymentIntentStatus, at: string }>(
        'SELECT intent_id, from_status, to_status, at FROM payment_intent_events WHERE intent_id = $1 ORDER BY seq', [id])
      return found.rows.map((e): PaymentIntentEvent => ({ intentId: e.intent_id, fromStatus: e.from_status, toStatus: e.to_status, at: Number(e.at) }))
    },
  }
}
