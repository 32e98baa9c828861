import type { RouteDeclaration, ServiceModule } from '../service-module.js'
import { paymentsHandlers } from './handlers.js'
import { requireJsonBody } from './json-content-type.js'
import { cancelSchema, createSchema } from './intent-body.js'
import { paymentsRequiredSettings, paymentsSettingsSchema } from './settings.js'

/** The routes (ids are the YAML keys under `services.payments.routes`). */
export const paymentsRoutes: readonly RouteDeclaration[] = [
  {
    id: 'processor_config',
    method: 'GET',
    url: '/config/processor',
    description: 'Processor name, publishable key and mode; with ?connected_account_id= also its processor account id. Scope: commerce:payment-intents.read.',
    scopes: ['commerce:payment-intents.read'],
  },
  {
    id: 'create_intent',
    method: 'POST',
    url: '/payment-intents',
    description: 'Creates a payment intent (Idempotency-Key supported). Scope: commerce:payment-intents.create.',
    scopes: ['commerce:payment-intents.create'],
    body: createSchema,
    errors: ['validation_failed', 'unsupported_media_type', 'payload_too_large', 'idempotency_key_invalid', 'idempotency_key_reused', 'idempotency_key_in_use', 'connected_account_not_found'],
  },
  {
    id: 'get_intent',
    method: 'GET',
    url: '/payment-intents/:intent',
    description: 'Reads a payment intent of the caller\'s organization tree. Scope: commerce:payment-intents.read.',
    scopes: ['commerce:payment-intents.read'],
    errors: ['payment_intent_not_found'],
  },
  {
    id: 'cancel_intent',
    method: 'POST',
    url: '/payment-intents/:intent/cancel',
    description: 'Cancels a payment intent (Idempotency-Key supported). Scope: commerce:payment-intents.create.',
    scopes: ['commerce:payment-intents.create'],
    body: cancelSchema,
    errors: ['validation_failed', 'payment_intent_not_found', 'payment_intent_not_cancelable', 'idempotency_key_invalid', 'idempotency_key_reused', 'idempotency_key_in_use'],
  },
  {
    id: 'connected_account',
    method: 'GET',
    url: '/connected-account',
    description: 'Looks up the connected account of ?organization_id=. Scope: commerce:connected-accounts.read.',
    scopes: ['commerce:connected-accounts.read'],
    errors: ['validation_failed', 'connected_account_not_found'],
  },
]

/**
 * Checkout payments: processor configuration, payment intents (create, read, cancel) and the connected-account
 * lookup, all answering `{success:true, data}` (errors `{success:false, message, ...}`). Suggested chain:
 * `rate-limit: payments-per-ip` → `auth` → `token-type: [service]`, then a `scope` per route. Handlers do the
 * object-level checks themselves (organization tree, intent ownership). docs/payments.md has the details.
 */
export const paymentsService: ServiceModule = {
  name: 'payments',
  description: 'Checkout payments: processor config, payment intents with Idempotency-Key, connected accounts.',
  routes: paymentsRoutes,
  settingsSchema: paymentsSettingsSchema,
  requiredSettings: paymentsRequiredSettings,

  build (deps) {
    const h = paymentsHandlers(deps.shared.store)
    return {
      handlers: {
        processor_config: h.processorConfig,
        // A body that is not application/json in UTF-8 is refused before it is parsed (415 unsupported_media_type).
        create_intent: { handler: h.createIntent, options: { preParsing: requireJsonBody } },
        get_intent: h.getIntent,
        cancel_intent: { handler: h.cancelIntent, options: { preParsing: requireJsonBody } },
        connected_account: h.connectedAccount,
      },
    }
  },
}

export default paymentsService
