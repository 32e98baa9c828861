import type { GatewayConfig } from '../../config/types.js'

/** `services.payments` settings beside prefix, envelope, policies and routes. */
export interface PaymentsSettings {
  processor: { name: string, publishable_key: string, mode: 'test' | 'live' }
  /** Allowed ISO 4217 codes, lower case. */
  currencies: string[]
  /** Largest amount in minor units. */
  max_amount: number
  metadata: { max_keys: number, max_key_length: number, max_value_length: number }
  idempotency_ttl_hours: number
  idempotency_abandon_after_seconds: number
}

export const DEFAULT_CURRENCIES = ['usd', 'eur', 'gbp', 'cad', 'aud', 'nzd', 'chf', 'sek', 'nok', 'dkk', 'jpy', 'mxn']
export const DEFAULT_MAX_AMOUNT = 99_999_999
export const DEFAULT_METADATA = { max_keys: 20, max_key_length: 40, max_value_length: 500 }
export const DEFAULT_IDEMPOTENCY_TTL_HOURS = 24
export const DEFAULT_ABANDON_AFTER_SECONDS = 60

/** JSON Schema of the settings (checked at config load; ajv fills the defaults). */
export const paymentsSettingsSchema: Record<string, Record<string, unknown>> = {
  processor: {
    type: 'object',
    description: 'The payment processor whose configuration GET /config/processor returns.',
    properties: {
      name: { type: 'string', minLength: 1, description: 'Processor name shown to clients (e.g. stripe).' },
      publishable_key: { type: 'string', minLength: 1, description: 'The processor\'s publishable (client-side) key. Never a secret key.' },
      mode: { type: 'string', enum: ['test', 'live'], default: 'test', description: 'Whether the key belongs to the processor\'s test or live mode.' },
    },
    required: ['name', 'publishable_key'],
    additionalProperties: false,
  },
  currencies: {
    type: 'array',
    description: 'ISO 4217 currency codes a payment intent may use (either case; compared in lower case).',
    items: { type: 'string', pattern: '^[A-Za-z]{3}$', description: 'An ISO 4217 code.' },
    minItems: 1,
    uniqueItems: true,
    default: DEFAULT_CURRENCIES,
  },
  max_amount: {
    type: 'integer',
    minimum: 1,
    maximum: 9_007_199_254_740_991,
    default: DEFAULT_MAX_AMOUNT,
    description: 'Largest payment-intent amount, in the currency\'s minor unit.',
  },
  metadata: {
    type: 'object',
    description: 'Bounds on a payment intent\'s metadata (string keys to string values).',
    properties: {
      max_keys: { type: 'integer', minimum: 0, maximum: 1000, default: DEFAULT_METADATA.max_keys, description: 'Most keys.' },
      max_key_length: { type: 'integer', minimum: 1, maximum: 1000, default: DEFAULT_METADATA.max_key_length, description: 'Longest key, in characters.' },
      max_value_length: { type: 'integer', minimum: 1, maximum: 100000, default: DEFAULT_METADATA.max_value_length, description: 'Longest value, in characters.' },
    },
    additionalProperties: false,
    default: DEFAULT_METADATA,
  },
  idempotency_ttl_hours: {
    type: 'integer',
    minimum: 24,
    maximum: 24 * 365,
    default: DEFAULT_IDEMPOTENCY_TTL_HOURS,
    description: 'How long an Idempotency-Key is remembered (at least 24 hours).',
  },
  idempotency_abandon_after_seconds: {
    type: 'integer',
    minimum: 1,
    maximum: 86400,
    default: DEFAULT_ABANDON_AFTER_SECONDS,
    description: 'A request still in progress after this long is treated as crashed: its key may be reused.',
  },
}

const resolved = new WeakMap<object, PaymentsSettings>()

/**
 * The payments settings of a config with every default filled in (the loader fills them too; this keeps
 * handlers correct for configs built in code). Cached per settings object, so per request it is one lookup.
 */
export function paymentsSettingsOf (config: GatewayConfig): PaymentsSettings {
  const raw = (config.services.payments ?? {}) as Partial<PaymentsSettings>
  const cached = resolved.get(raw)
  if (cached !== undefined) return cached
  const settings: PaymentsSettings = {
    processor: {
      name: raw.processor?.name ?? 'unconfigured',
      publishable_key: raw.processor?.publishable_key ?? '',
      mode: raw.processor?.mode ?? 'test',
    },
    currencies: (raw.currencies ?? DEFAULT_CURRENCIES).map((c) => c.toLowerCase()),
    max_amount: raw.max_amount ?? DEFAULT_MAX_AMOUNT,
    metadata: { ...DEFAULT_METADATA, ...raw.metadata },
    idempotency_ttl_hours: raw.idempotency_ttl_hours ?? DEFAULT_IDEMPOTENCY_TTL_HOURS,
    idempotency_abandon_after_seconds: raw.idempotency_abandon_after_seconds ?? DEFAULT_ABANDON_AFTER_SECONDS,
  }
  resolved.set(raw, settings)
  return settings
}
