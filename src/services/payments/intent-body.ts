import { compileSchema } from '../../plugin/validators.js'
import { cancellationReasons, type CancellationReason } from '../../store/payment-intent-store.js'
import type { PaymentsSettings } from './settings.js'
import { addFieldError, fieldErrorsOf, throwIfInvalid, type FieldErrors } from './validation-errors.js'

/** A validated `POST /payment-intents` body. Exactly one of `organizationId` / `connectedAccountId` is set. */
export interface CreateIntentInput {
  amount: number
  /** Lower case. */
  currency: string
  description: string | null
  metadata: Record<string, string>
  captureMethod: 'automatic' | 'manual'
  organizationId?: string
  connectedAccountId?: string
}

const id = (description: string) => ({ type: 'string', minLength: 1, maxLength: 255, description })

/** JSON Schema of a create body (also the route's declared body). */
export const createSchema = {
  type: 'object',
  description: 'Create a payment intent.',
  properties: {
    organization_id: id('Organization (or store organization) whose connected account receives the payment.'),
    connected_account_id: id('Connected account that receives the payment.'),
    amount: { type: 'integer', minimum: 1, description: 'Amount in the currency\'s minor unit (e.g. cents).' },
    currency: { type: 'string', pattern: '^[A-Za-z]{3}$', description: 'ISO 4217 code, either case.' },
    description: { type: 'string', maxLength: 1000, description: 'Free text shown on the processor dashboard.' },
    metadata: { type: 'object', description: 'String key/value pairs kept with the intent.' },
    capture_method: { type: 'string', enum: ['automatic', 'manual'], description: 'Capture at confirmation (automatic) or later (manual).' },
  },
  required: ['amount', 'currency'],
  additionalProperties: false,
}
const validateCreate = compileSchema(createSchema, 'lanegate')

/** JSON Schema of a cancel body (also the route's declared body). */
export const cancelSchema = {
  type: 'object',
  description: 'Cancel a payment intent.',
  properties: {
    cancellation_reason: { type: 'string', enum: [...cancellationReasons], description: 'Why the intent is canceled.' },
  },
  additionalProperties: false,
}
const validateCancel = compileSchema(cancelSchema, 'lanegate')

export const ONE_DESTINATION_MESSAGE = 'Provide exactly one of organization_id or connected_account_id.'

/** Validates a create body against the schema and the current settings; throws 422 validation_failed. */
export function parseCreateIntent (body: unknown, settings: PaymentsSettings): CreateIntentInput {
  const errors: FieldErrors = {}
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throwIfInvalid({ body: ['must be a JSON object'] })
  }
  if (!validateCreate(body)) fieldErrorsOf(validateCreate.errors ?? [], 'body', errors)
  const b = body as Record<string, unknown>

  const hasOrg = b.organization_id !== undefined
  const hasAccount = b.connected_account_id !== undefined
  let message: string | undefined
  if (hasOrg === hasAccount) {
    message = ONE_DESTINATION_MESSAGE
    const why = hasOrg ? 'must not be combined with connected_account_id' : 'is required when connected_account_id is absent'
    addFieldError(errors, 'organization_id', why)
    addFieldError(errors, 'connected_account_id', hasOrg ? 'must not be combined with organization_id' : 'is required when organization_id is absent')
  }
  if (typeof b.amount === 'number' && Number.isInteger(b.amount) && b.amount > settings.max_amount) {
    addFieldError(errors, 'amount', `must be <= ${settings.max_amount}`)
  }
  if (typeof b.currency === 'string' && /^[A-Za-z]{3}$/.test(b.currency) && !settings.currencies.includes(b.currency.toLowerCase())) {
    addFieldError(errors, 'currency', `must be one of: ${settings.currencies.join(', ')}`)
  }
  if (b.metadata !== null && typeof b.metadata === 'object' && !Array.isArray(b.metadata)) {
    checkMetadata(b.metadata as Record<string, unknown>, settings.metadata, errors)
  }
  throwIfInvalid(errors, message)

  return {
    amount: b.amount as number,
    currency: (b.currency as string).toLowerCase(),
    description: (b.description as string | undefined) ?? null,
    metadata: (b.metadata as Record<string, string> | undefined) ?? {},
    captureMethod: (b.capture_method as 'automatic' | 'manual' | undefined) ?? 'automatic',
    ...(hasOrg ? { organizationId: b.organization_id as string } : { connectedAccountId: b.connected_account_id as string }),
  }
}

function checkMetadata (metadata: Record<string, unknown>, bounds: PaymentsSettings['metadata'], errors: FieldErrors): void {
  const keys = Object.keys(metadata)
  if (keys.length > bounds.max_keys) addFieldError(errors, 'metadata', `must have at most ${bounds.max_keys} keys`)
  for (const key of keys) {
    if (key.length === 0 || key.length > bounds.max_key_length) {
      addFieldError(errors, 'metadata', `keys must be 1 to ${bounds.max_key_length} characters`)
    }
    const value = metadata[key]
    if (typeof value !== 'string') addFieldError(errors, `metadata.${key}`, 'must be string')
    else if (value.length > bounds.max_value_length) addFieldError(errors, `metadata.${key}`, `must NOT have more than ${bounds.max_value_length} characters`)
  }
}

/** Validates a cancel body (absent or `{}` is fine); throws 422 validation_failed. */
export function parseCancelIntent (body: unknown): { cancellationReason: CancellationReason | null } {
  const value = body ?? {}
  if (!validateCancel(value)) throwIfInvalid(fieldErrorsOf(validateCancel.errors ?? []))
  return { cancellationReason: (value as { cancellation_reason?: CancellationReason }).cancellation_reason ?? null }
}
