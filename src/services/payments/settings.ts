import { Type, type Static } from '@sinclair/typebox'
import type { GatewayConfig } from '../../config/types.js'
import { requiredServiceSettings, settingsProperties } from '../service-settings.js'

const DEFAULT_CURRENCIES = ['usd', 'eur', 'gbp', 'cad', 'aud', 'nzd', 'chf', 'sek', 'nok', 'dkk', 'jpy', 'mxn']

/**
 * `services.payments` settings beside prefix, envelope, policies and routes, declared once: this TypeBox object is
 * the JSON Schema the loader checks (and fills the defaults of), and `PaymentsSettings` is its type.
 */
export const PaymentsSettingsSchema = Type.Object({
  processor: Type.Object({
    name: Type.String({ minLength: 1, description: 'Processor name shown to clients (e.g. stripe).' }),
    publishable_key: Type.String({ minLength: 1, description: 'The processor\'s publishable (client-side) key. Never a secret key.' }),
    mode: Type.Unsafe<'test' | 'live'>({ type: 'string', enum: ['test', 'live'], default: 'test', description: 'Whether the key belongs to the processor\'s test or live mode.' }),
  }, { additionalProperties: false, description: 'The payment processor whose configuration GET /config/processor returns.' }),
  currencies: Type.Array(Type.String({ pattern: '^[A-Za-z]{3}$', description: 'An ISO 4217 code.' }), {
    minItems: 1,
    uniqueItems: true,
    default: DEFAULT_CURRENCIES,
    description: 'ISO 4217 currency codes a payment intent may use (either case; compared in lower case).',
  }),
  max_amount: Type.Integer({ minimum: 1, maximum: 9_007_199_254_740_991, default: 99_999_999, description: 'Largest payment-intent amount, in the currency\'s minor unit.' }),
  metadata: Type.Object({
    max_keys: Type.Integer({ minimum: 0, maximum: 1000, default: 20, description: 'Most keys.' }),
    max_key_length: Type.Integer({ minimum: 1, maximum: 1000, default: 40, description: 'Longest key, in characters.' }),
    max_value_length: Type.Integer({ minimum: 1, maximum: 100000, default: 500, description: 'Longest value, in characters.' }),
  }, { additionalProperties: false, default: {}, description: 'Bounds on a payment intent\'s metadata (string keys to string values).' }),
  idempotency_ttl_hours: Type.Integer({ minimum: 24, maximum: 24 * 365, default: 24, description: 'How long an Idempotency-Key is remembered (at least 24 hours).' }),
  idempotency_abandon_after_seconds: Type.Integer({ minimum: 1, maximum: 86400, default: 60, description: 'A request still in progress after this long is treated as crashed: its key may be reused.' }),
})

/** The validated settings (every default filled in by the loader). */
export type PaymentsSettings = Static<typeof PaymentsSettingsSchema>

/** JSON Schema properties of the settings, for the service module (the loader checks them; ajv fills the defaults). */
export const paymentsSettingsSchema = settingsProperties(PaymentsSettingsSchema)
/** Settings keys without a default. */
export const paymentsRequiredSettings = ['processor']

const resolved = new WeakMap<object, PaymentsSettings>()

/**
 * The payments settings of a validated config, currencies in lower case. The loader has filled every default
 * (there are no fallbacks here); cached per settings object, so per request it is one lookup.
 */
export function paymentsSettingsOf (config: GatewayConfig): PaymentsSettings {
  const block = requiredServiceSettings(config, 'payments', PaymentsSettingsSchema)
  const cached = resolved.get(block)
  if (cached !== undefined) return cached
  const settings: PaymentsSettings = { ...block, currencies: block.currencies.map((c) => c.toLowerCase()) }
  resolved.set(block, settings)
  return settings
}
