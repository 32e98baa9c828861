import type { PaymentIntent } from '../../store/payment-intent-store.js'

/** The API view of an intent (docs/payments.md lists the fields). Times are ISO 8601 UTC. */
export function renderIntent (intent: PaymentIntent): Record<string, unknown> {
  return {
    id: intent.id,
    amount: intent.amount,
    currency: intent.currency,
    status: intent.status,
    capture_method: intent.captureMethod,
    description: intent.description,
    metadata: intent.metadata,
    organization_id: intent.organizationId,
    connected_account_id: intent.connectedAccountId,
    destination: intent.destination,
    client_secret: intent.clientSecret,
    created_at: new Date(intent.createdAt).toISOString(),
    canceled_at: intent.canceledAt === null ? null : new Date(intent.canceledAt).toISOString(),
    cancellation_reason: intent.cancellationReason,
  }
}

/** The one success envelope of every payments response. */
export function ok (data: unknown): { success: true, data: unknown } {
  return { success: true, data }
}
