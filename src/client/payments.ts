import type { CallOptions, HttpCore } from './http-core.js'

/** `GET /config/processor` (docs/payments.md). */
export interface ProcessorConfig {
  processor: string
  publishable_key: string
  mode: 'test' | 'live'
  /** With `connectedAccountId` (Connect mode). */
  connected_account_id?: string
  processor_account_id?: string
}

export type CaptureMethod = 'automatic' | 'manual'
export type CancellationReason = 'duplicate' | 'fraudulent' | 'requested_by_customer' | 'abandoned'
export type PaymentIntentStatus =
  | 'requires_payment_method' | 'requires_confirmation' | 'requires_action' | 'processing'
  | 'requires_capture' | 'succeeded' | 'canceled'

/** `POST /payment-intents` body: exactly one of `organization_id` and `connected_account_id`. */
export type CreateIntentInput = {
  /** Minor units, ≥ 1. */
  amount: number
  /** ISO 4217, either case. */
  currency: string
  description?: string
  metadata?: Record<string, string>
  capture_method?: CaptureMethod
} & ({ organization_id: string, connected_account_id?: never } | { connected_account_id: string, organization_id?: never })

/** A payment intent as the gateway renders it. */
export interface PaymentIntent {
  id: string
  amount: number
  currency: string
  capture_method: CaptureMethod
  description: string | null
  metadata: Record<string, string>
  status: PaymentIntentStatus
  organization_id: string
  connected_account_id: string
  destination: string
  /** For the client-side processor SDK; not a credential of yours. */
  client_secret: string
  created_at: string
  canceled_at: string | null
  cancellation_reason: CancellationReason | null
}

/** `GET /connected-account`. */
export interface ConnectedAccount {
  connected_account_id: string
  organization_id: string
  processor_account_id: string
}

/** Options of the two POSTs: an `Idempotency-Key` is generated unless given. */
export interface IdempotentCallOptions extends CallOptions {
  /** 1–255 printable ASCII characters; reuse it to retry the same request later (default: a random UUID). */
  idempotencyKey?: string
}

interface Envelope<T> { success: true, data: T }

/**
 * The payments endpoints (`/api/v1/ecommerce` by default). Answers are unwrapped from `{success, data}`. Errors use
 * the payments envelope, which carries no code: each method names the code its 404/409 mean.
 */
export class PaymentsApi {
  constructor (private readonly core: HttpCore, private readonly prefix: string) {}

  /** `GET /config/processor[?connected_account_id=]` (scope `commerce:payment-intents.read`). */
  async processorConfig (params: { connectedAccountId?: string } = {}, options: CallOptions = {}): Promise<ProcessorConfig> {
    const query = new URLSearchParams()
    if (params.connectedAccountId !== undefined) query.set('connected_account_id', params.connectedAccountId)
    return (await this.core.json<Envelope<ProcessorConfig>>({ ...options, method: 'GET', path: `${this.prefix}/config/processor`, query, hints: { 404: 'connected_account_not_found' } })).data
  }

  /**
   * `POST /payment-intents` (scope `commerce:payment-intents.create`), with an `Idempotency-Key` (generated unless
   * given), so a 5xx or a lost answer is retried safely: the gateway replays the first answer.
   */
  async createIntent (input: CreateIntentInput, options: IdempotentCallOptions = {}): Promise<PaymentIntent> {
    return (await this.core.json<Envelope<PaymentIntent>>({
      ...callOptions(options),
      headers: { ...options.headers, 'idempotency-key': options.idempotencyKey ?? globalThis.crypto.randomUUID() },
      method: 'POST',
      path: `${this.prefix}/payment-intents`,
      json: input,
      hints: { 404: 'connected_account_not_found', 409: 'idempotency_key_in_use' },
    })).data
  }

  /** `GET /payment-intents/:intent` (scope `commerce:payment-intents.read`). */
  async getIntent (intentId: string, options: CallOptions = {}): Promise<PaymentIntent> {
    return (await this.core.json<Envelope<PaymentIntent>>({ ...options, method: 'GET', path: `${this.prefix}/payment-intents/${encodeURIComponent(intentId)}`, hints: { 404: 'payment_intent_not_found' } })).data
  }

  /** `POST /payment-intents/:intent/cancel` (scope `commerce:payment-intents.create`), with an `Idempotency-Key`. */
  async cancelIntent (intentId: string, params: { cancellationReason?: CancellationReason } = {}, options: IdempotentCallOptions = {}): Promise<PaymentIntent> {
    return (await this.core.json<Envelope<PaymentIntent>>({
      ...callOptions(options),
      headers: { ...options.headers, 'idempotency-key': options.idempotencyKey ?? globalThis.crypto.randomUUID() },
      method: 'POST',
      path: `${this.prefix}/payment-intents/${encodeURIComponent(intentId)}/cancel`,
      json: params.cancellationReason === undefined ? {} : { cancellation_reason: params.cancellationReason },
      hints: { 404: 'payment_intent_not_found', 409: 'payment_intent_not_cancelable' },
    })).data
  }

  /** `GET /connected-account?organization_id=` (scope `commerce:connected-accounts.read`). */
  async connectedAccount (organizationId: string, options: CallOptions = {}): Promise<ConnectedAccount> {
    const query = new URLSearchParams({ organization_id: organizationId })
    return (await this.core.json<Envelope<ConnectedAccount>>({ ...options, method: 'GET', path: `${this.prefix}/connected-account`, query, hints: { 404: 'connected_account_not_found' } })).data
  }
}

/** The CallOptions part of IdempotentCallOptions (the key travels as a header). */
function callOptions (options: IdempotentCallOptions): CallOptions {
  return options.signal === undefined ? {} : { signal: options.signal }
}
