import type { CancellationReason, PaymentIntent, PaymentIntentStatus, TransitionRequest } from './payment-intent-store.js'

/** A `payment_intents` row as both drivers return it (PostgreSQL BIGINTs arrive as strings). */
export interface PaymentIntentRow {
  id: string
  owner_org_id: string
  client_id: string
  amount: number | string
  currency: string
  status: PaymentIntentStatus
  capture_method: 'automatic' | 'manual'
  description: string | null
  metadata: string | Record<string, string>
  organization_id: string
  connected_account_id: string
  destination: string
  client_secret: string
  created_at: number | string
  canceled_at: number | string | null
  cancellation_reason: CancellationReason | null
  /** Idempotency reference of the request that made the last status change (not part of the domain object). */
  status_idempotency_ref?: string | null
}

/** Maps a row to the domain object, shared by both drivers so they cannot drift apart. */
export function toPaymentIntent (row: PaymentIntentRow): PaymentIntent {
  return {
    id: row.id,
    ownerOrgId: row.owner_org_id,
    clientId: row.client_id,
    amount: Number(row.amount),
    currency: row.currency,
    status: row.status,
    captureMethod: row.capture_method,
    description: row.description,
    metadata: typeof row.metadata === 'string' ? JSON.parse(row.metadata) as Record<string, string> : row.metadata,
    organizationId: row.organization_id,
    connectedAccountId: row.connected_account_id,
    destination: row.destination,
    clientSecret: row.client_secret,
    createdAt: Number(row.created_at),
    canceledAt: row.canceled_at === null ? null : Number(row.canceled_at),
    cancellationReason: row.cancellation_reason,
  }
}

/**
 * Whether a refused change was in fact made earlier by the same request: the row is already in the target state
 * and the change that put it there carried this idempotency reference. Shared by both drivers.
 */
export function alreadyApplied (row: PaymentIntentRow, change: TransitionRequest): boolean {
  return change.idempotencyRef !== undefined && row.status === change.to && row.status_idempotency_ref === change.idempotencyRef
}
