/**
 * Durable payment intents. An intent belongs to the organization of the caller that created it (`ownerOrgId`);
 * reads and status changes take the set of organizations the current caller may reach and treat an intent
 * owned outside it exactly like a missing one, so a caller can never tell another organization's intent from
 * an unknown id.
 */

/**
 * The processor's payment-intent states. The gateway only moves intents to `canceled`; the other moves belong
 * to the processor (docs/payments.md draws the machine).
 */
export const paymentIntentStatuses = [
  'requires_payment_method', 'requires_confirmation', 'requires_action', 'processing', 'requires_capture',
  'canceled', 'succeeded',
] as const
export type PaymentIntentStatus = typeof paymentIntentStatuses[number]

export const cancellationReasons = ['duplicate', 'fraudulent', 'requested_by_customer', 'abandoned'] as const
export type CancellationReason = typeof cancellationReasons[number]

export interface PaymentIntent {
  /** `pi_<ulid>`. */
  id: string
  /** Organization of the caller that created it; only callers reaching it may read or cancel it. */
  ownerOrgId: string
  /** Client id of the service account that created it (audit only). */
  clientId: string
  /** Positive integer in the currency's minor unit. */
  amount: number
  /** ISO 4217, lower case. */
  currency: string
  status: PaymentIntentStatus
  captureMethod: 'automatic' | 'manual'
  description: string | null
  metadata: Record<string, string>
  /** Organization (or store organization) the payment is for: the owner of the connected account. */
  organizationId: string
  connectedAccountId: string
  /** The processor account id money is routed to. */
  destination: string
  clientSecret: string
  /** Milliseconds since the epoch. */
  createdAt: number
  canceledAt: number | null
  cancellationReason: CancellationReason | null
}

/** What `create` stores: everything but the fields the store owns. */
export type NewPaymentIntent = Omit<PaymentIntent, 'status' | 'canceledAt' | 'cancellationReason'> & {
  /**
   * Digest of the Idempotency-Key scope (client, route, key). When an intent with the same reference exists,
   * `create` returns it instead of storing a second one.
   */
  idempotencyRef?: string
}

/** One recorded state change (the events table, append-only). */
export interface PaymentIntentEvent {
  intentId: string
  /** `null` for the creation event. */
  fromStatus: PaymentIntentStatus | null
  toStatus: PaymentIntentStatus
  /** Milliseconds since the epoch. */
  at: number
}

export interface TransitionRequest {
  /** The change applies only when the intent is in one of these states. */
  from: readonly PaymentIntentStatus[]
  to: PaymentIntentStatus
  /** Milliseconds since the epoch; recorded as `canceledAt` when `to` is `canceled`. */
  at: number
  cancellationReason?: CancellationReason | null
  /**
   * Digest of the Idempotency-Key scope (client, route, key) of the request making the change. It is stored with
   * the change, in the same transaction; when the intent is already in `to` because of a change made under the
   * same reference (its answer was lost), the result is `already_applied` instead of a conflict.
   */
  idempotencyRef?: string
}

export type TransitionResult =
  | { outcome: 'updated', intent: PaymentIntent }
  /** The intent is already in `to` through an earlier change under the same `idempotencyRef`; nothing changed. */
  | { outcome: 'already_applied', intent: PaymentIntent }
  | { outcome: 'not_found' }
  /** The intent exists (and is visible) but was not in a `from` state: its current status. */
  | { outcome: 'conflict', status: PaymentIntentStatus }

export interface PaymentIntentStore {
  /** Stores a new intent in `requires_payment_method` and records the creation event, durably (or returns the intent already stored under the same `idempotencyRef`). */
  create (intent: NewPaymentIntent): Promise<PaymentIntent>
  /** The intent when it exists and its owner is in `visibleTo`; otherwise undefined. */
  get (id: string, visibleTo: ReadonlySet<string>): Promise<PaymentIntent | undefined>
  /**
   * Atomic conditional status change (`UPDATE … WHERE id = ? AND status IN (from)`), recorded in the events
   * table in the same transaction. Of concurrent callers moving the same intent, exactly one gets `updated`;
   * the others see the new status as a `conflict` (or `already_applied` when they carry the winner's
   * `idempotencyRef`).
   */
  transition (id: string, visibleTo: ReadonlySet<string>, change: TransitionRequest): Promise<TransitionResult>
  /** The intent's state changes, oldest first. */
  events (id: string): Promise<PaymentIntentEvent[]>
}
