import type Database from 'better-sqlite3'
import type {
  NewPaymentIntent, PaymentIntent, PaymentIntentEvent, PaymentIntentStatus, PaymentIntentStore, TransitionRequest,
  TransitionResult,
} from '../payment-intent-store.js'
import { alreadyApplied, toPaymentIntent, type PaymentIntentRow } from '../payment-intent-row.js'

/**
 * PaymentIntentStore over better-sqlite3. Each method is one synchronous IMMEDIATE transaction, so SQLite's
 * single writer serializes the conditional updates, across processes sharing the file too.
 */
export function createSqlitePaymentIntentStore (db: Database.Database): PaymentIntentStore {
  const insertIntent = db.prepare(`INSERT INTO payment_intents (id, owner_org_id, client_id, amount, currency, status,
    capture_method, description, metadata, organization_id, connected_account_id, destination, client_secret,
    created_at, idempotency_ref) VALUES (@id, @ownerOrgId, @clientId, @amount, @currency, 'requires_payment_method', @captureMethod,
    @description, @metadata, @organizationId, @connectedAccountId, @destination, @clientSecret, @createdAt, @idempotencyRef)`)
  const insertEvent = db.prepare('INSERT INTO payment_intent_events (intent_id, from_status, to_status, at) VALUES (?, ?, ?, ?)')
  const selectIntent = db.prepare<[string], PaymentIntentRow>('SELECT * FROM payment_intents WHERE id = ?')
  const selectByRef = db.prepare<[string], PaymentIntentRow>('SELECT * FROM payment_intents WHERE idempotency_ref = ?')
  const selectEvents = db.prepare<[string], { intent_id: string, from_status: PaymentIntentStatus | null, to_status: PaymentIntentStatus, at: number }>(
    'SELECT intent_id, from_status, to_status, at FROM payment_intent_events WHERE intent_id = ? ORDER BY seq')

  const create = db.transaction((intent: NewPaymentIntent): PaymentIntent => {
    const existing = intent.idempotencyRef === undefined ? undefined : selectByRef.get(intent.idempotencyRef)
    if (existing !== undefined) return toPaymentIntent(existing)
    insertIntent.run({ ...intent, metadata: JSON.stringify(intent.metadata), idempotencyRef: intent.idempotencyRef ?? null })
    insertEvent.run(intent.id, null, 'requires_payment_method', intent.createdAt)
    return toPaymentIntent(selectIntent.get(intent.id) as PaymentIntentRow)
  })

  const transition = db.transaction((id: string, visibleTo: ReadonlySet<string>, change: TransitionRequest): TransitionResult => {
    const row = selectIntent.get(id)
    if (row === undefined || !visibleTo.has(row.owner_org_id)) return { outcome: 'not_found' }
    if (!change.from.includes(row.status)) {
      return alreadyApplied(row, change) ? { outcome: 'already_applied', intent: toPaymentIntent(row) } : { outcome: 'conflict', status: row.status }
    }
    const placeholders = change.from.map(() => '?').join(', ')
    const canceled = change.to === 'canceled'
    const result = db.prepare(`UPDATE payment_intents SET status = ?, canceled_at = ?, cancellation_reason = ?,
      status_idempotency_ref = ? WHERE id = ? AND status IN (${placeholders})`).run(
      change.to, canceled ? change.at : row.canceled_at, canceled ? change.cancellationReason ?? null : row.cancellation_reason,
      change.idempotencyRef ?? null, id, ...change.from)
    // Inside the write transaction nothing can have changed since the read; the WHERE keeps the rule explicit.
    if (result.changes !== 1) return { outcome: 'conflict', status: (selectIntent.get(id) as PaymentIntentRow).status }
    insertEvent.run(id, row.status, change.to, change.at)
    return { outcome: 'updated', intent: toPaymentIntent(selectIntent.get(id) as PaymentIntentRow) }
  })

  return {
    async create (intent) {
      return create.immediate(intent)
    },
    async get (id, visibleTo) {
      const row = selectIntent.get(id)
      return row !== undefined && visibleTo.has(row.owner_org_id) ? toPaymentIntent(row) : undefined
    },
    async transition (id, visibleTo, change) {
      return transition.immediate(id, visibleTo, change)
    },
    async events (id) {
      return selectEvents.all(id).map((e): PaymentIntentEvent => ({ intentId: e.intent_id, fromStatus: e.from_status, toStatus: e.to_status, at: e.at }))
    },
  }
}
