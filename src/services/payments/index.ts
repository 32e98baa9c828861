import type { RouteDefinition, ServiceModule } from '../service-module.js'
import { paymentsHandlers } from './handlers.js'
import { requireJsonBody } from './json-content-type.js'
import { paymentsSettingsSchema } from './settings.js'

/** The route ids (YAML keys under `services.payments.routes`). */
export const paymentsRouteIds = ['processor_config', 'create_intent', 'get_intent', 'cancel_intent', 'connected_account'] as const

/**
 * Checkout payments: processor configuration, payment intents (create, read, cancel) and the connected-account
 * lookup, all answering `{success:true, data}` (errors `{success:false, message, ...}`). Suggested chain:
 * `rate-limit: payments-per-ip` → `auth` → `token-type: [service]`, then a `scope` per route. Handlers do the
 * object-level checks themselves (organization tree, intent ownership). docs/payments.md has the details.
 */
export const paymentsService: ServiceModule = {
  name: 'payments',
  description: 'Checkout payments: processor config, payment intents with Idempotency-Key, connected accounts.',
  routeIds: paymentsRouteIds,
  settingsSchema: paymentsSettingsSchema,
  requiredSettings: ['processor'],

  build (deps) {
    const h = paymentsHandlers(deps.shared.store)
    const routes: RouteDefinition[] = [
      {
        id: 'processor_config',
        method: 'GET',
        url: '/config/processor',
        description: 'Processor name, publishable key and mode; with ?connected_account_id= also its processor account id. Scope: commerce:payment-intents.read.',
        handler: h.processorConfig,
      },
      {
        id: 'create_intent',
        method: 'POST',
        url: '/payment-intents',
        description: 'Creates a payment intent (Idempotency-Key supported). Scope: commerce:payment-intents.create.',
        options: { preParsing: requireJsonBody },
        handler: h.createIntent,
      },
      {
        id: 'get_intent',
        method: 'GET',
        url: '/payment-intents/:intent',
        description: 'Reads a payment intent of the caller\'s organization tree. Scope: commerce:payment-intents.read.',
        handler: h.getIntent,
      },
      {
        id: 'cancel_intent',
        method: 'POST',
        url: '/payment-intents/:intent/cancel',
        description: 'Cancels a payment intent (Idempotency-Key supported). Scope: commerce:payment-intents.create.',
        options: { preParsing: requireJsonBody },
        handler: h.cancelIntent,
      },
      {
        id: 'connected_account',
        method: 'GET',
        url: '/connected-account',
        description: 'Looks up the connected account of ?organization_id=. Scope: commerce:connected-accounts.read.',
        handler: h.connectedAccount,
      },
    ]
    return { routes }
  },
}

export default paymentsService
