import { randomBytes } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { ulid } from 'ulid'
import { GatewayError } from '../../plugin/gateway-error.js'
import type { Principal } from '../../runtime/request-context.js'
import type { PaymentIntentStatus } from '../../store/payment-intent-store.js'
import type { Store } from '../../store/store.js'
import { accountForOrganization, connectedAccount } from './destination.js'
import { idempotencyRefOf, withIdempotency } from './idempotency.js'
import { parseCancelIntent, parseCreateIntent } from './intent-body.js'
import { ok, renderIntent } from './render-intent.js'
import { paymentsSettingsOf } from './settings.js'
import { addFieldError, throwIfInvalid, type FieldErrors } from './validation-errors.js'

/**
 * The states an intent may be canceled from (Stripe's rule); `canceled` and `succeeded` are final. See the
 * state machine in docs/payments.md.
 */
export const CANCELABLE: readonly PaymentIntentStatus[] = [
  'requires_payment_method', 'requires_confirmation', 'requires_action', 'requires_capture', 'processing',
]

const INTENT_ID = /^pi_[0-9A-HJKMNP-TV-Z]{26}$/

function principalOf (request: FastifyRequest): Principal {
  const principal = request.gw.principal
  // The route chain runs `auth` first; a chain without it is a configuration mistake, answered like no token.
  if (principal === undefined) throw new GatewayError('unauthenticated')
  return principal
}

/** One optional query parameter, as a single non-empty string. */
function queryParam (request: FastifyRequest, name: string, errors: FieldErrors): string | undefined {
  const value = (request.query as Record<string, unknown> | undefined)?.[name]
  if (value === undefined) return undefined
  if (typeof value !== 'string') addFieldError(errors, name, 'must be given once')
  else if (value.length === 0 || value.length > 255) addFieldError(errors, name, 'must be 1 to 255 characters')
  else return value
  return undefined
}

/** GET the processor configuration (and a connected account's, when asked). */
async function processorConfig (request: FastifyRequest) {
  const principal = principalOf(request)
  const { processor } = paymentsSettingsOf(request.gw.snapshot.config)
  const errors: FieldErrors = {}
  const accountId = queryParam(request, 'connected_account_id', errors)
  throwIfInvalid(errors, 'The query parameters are invalid.')
  const data: Record<string, unknown> = { processor: processor.name, publishable_key: processor.publishable_key, mode: processor.mode }
  if (accountId !== undefined) {
    const account = connectedAccount(request.gw.snapshot.indexes, principal, accountId)
    data.connected_account_id = account.id
    data.processor_account_id = account.processor_account_id
  }
  return ok(data)
}

/** POST a payment intent, once per idempotency key. */
async function createIntent (store: Store, request: FastifyRequest, reply: FastifyReply) {
  const principal = principalOf(request)
  const settings = paymentsSettingsOf(request.gw.snapshot.config)
  return withIdempotency(request, reply, store.idempotency, settings, async () => {
    const input = parseCreateIntent(request.body, settings)
    const { indexes } = request.gw.snapshot
    const account = input.organizationId !== undefined
      ? accountForOrganization(indexes, principal, input.organizationId)
      : connectedAccount(indexes, principal, input.connectedAccountId as string)
    const id = `pi_${ulid()}`
    const intent = await store.payments.create({
      id,
      ownerOrgId: principal.organizationId,
      clientId: principal.clientId,
      amount: input.amount,
      currency: input.currency,
      captureMethod: input.captureMethod,
      description: input.description,
      metadata: input.metadata,
      organizationId: account.ownerId,
      connectedAccountId: account.id,
      destination: account.processor_account_id,
      clientSecret: `${id}_secret_${randomBytes(18).toString('base64url')}`,
      createdAt: Date.now(),
      idempotencyRef: idempotencyRefOf(request, principal.clientId),
    })
    return { statusCode: 201, body: ok(renderIntent(intent)) }
  })
}

/** GET one payment intent the caller's organization may see. */
async function getIntent (store: Store, request: FastifyRequest) {
  const principal = principalOf(request)
  const { intent: id } = request.params as { intent: string }
  const visible = request.gw.snapshot.indexes.reachable(principal.organizationId)
  const intent = INTENT_ID.test(id) ? await store.payments.get(id, visible) : undefined
  // Another organization's intent is answered exactly like a missing one: its existence is not revealed.
  if (intent === undefined) throw new GatewayError('payment_intent_not_found')
  return ok(renderIntent(intent))
}

/** POST a cancellation, once per idempotency key. */
async function cancelIntent (store: Store, request: FastifyRequest, reply: FastifyReply) {
  const principal = principalOf(request)
  const settings = paymentsSettingsOf(request.gw.snapshot.config)
  return withIdempotency(request, reply, store.idempotency, settings, async () => {
    const { intent: id } = request.params as { intent: string }
    const { cancellationReason } = parseCancelIntent(request.body)
    if (!INTENT_ID.test(id)) throw new GatewayError('payment_intent_not_found')
    const visible = request.gw.snapshot.indexes.reachable(principal.organizationId)
    // The key's reference is stored with the change, so a retry whose first attempt canceled but could not
    // remember its answer (database failure, crash) gets `already_applied`: the same 200, not a 409.
    const result = await store.payments.transition(id, visible, {
      from: CANCELABLE, to: 'canceled', at: Date.now(), cancellationReason, idempotencyRef: idempotencyRefOf(request, principal.clientId),
    })
    if (result.outcome === 'not_found') throw new GatewayError('payment_intent_not_found')
    if (result.outcome === 'conflict') {
      throw new GatewayError('payment_intent_not_cancelable', {
        message: `The payment intent cannot be canceled because its status is ${result.status}.`,
        fields: { status: result.status },
      })
    }
    return { statusCode: 200, body: ok(renderIntent(result.intent)) }
  })
}

/** GET the connected account of an organization. */
async function connectedAccountOf (request: FastifyRequest) {
  const principal = principalOf(request)
  const errors: FieldErrors = {}
  const organizationId = queryParam(request, 'organization_id', errors)
  if (organizationId === undefined && Object.keys(errors).length === 0) addFieldError(errors, 'organization_id', 'is required')
  throwIfInvalid(errors, 'The query parameters are invalid.')
  const account = accountForOrganization(request.gw.snapshot.indexes, principal, organizationId as string)
  return ok({ connected_account_id: account.id, organization_id: account.ownerId, processor_account_id: account.processor_account_id })
}

/** The payments handlers over one store; settings are read from the request's snapshot (hot reload). */
export function paymentsHandlers (store: Store) {
  return {
    processorConfig: async (request: FastifyRequest) => processorConfig(request),
    createIntent: async (request: FastifyRequest, reply: FastifyReply) => createIntent(store, request, reply),
    getIntent: async (request: FastifyRequest) => getIntent(store, request),
    cancelIntent: async (request: FastifyRequest, reply: FastifyReply) => cancelIntent(store, request, reply),
    connectedAccount: async (request: FastifyRequest) => connectedAccountOf(request),
  }
}
