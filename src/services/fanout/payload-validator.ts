import type { ErrorObject, ValidateFunction } from 'ajv'
import { compileSchema } from '../../plugin/validators.js'

/** Payload field → messages, the `errors` map of `fanout_payload_validation_failed`. */
export type PayloadErrors = Record<string, string[]>

// Schemas come from an immutable config snapshot, so the schema object identifies the compiled validator; a
// reload brings new objects and the old validators are collected with the old snapshot.

/** Compiles (once per schema object) an operation's payload schema; throws on an invalid schema. */
export function payloadValidator (schema: Record<string, unknown>): ValidateFunction {
  return compileSchema(schema, 'payload')
}

/** The schema's problem message, or undefined when it compiles (for the service's config check). */
export function schemaProblem (schema: Record<string, unknown>): string | undefined {
  try {
    payloadValidator(schema)
    return undefined
  } catch (error) {
    return (error as Error).message
  }
}

/**
 * Validates a payload; returns the errors map (empty when valid). Keys are dotted paths below the payload
 * (`items.0.sku`), `payload` for the payload itself; a missing property is reported under its own name.
 */
export function validatePayload (schema: Record<string, unknown>, payload: unknown): PayloadErrors {
  const validate = payloadValidator(schema)
  if (validate(payload)) return {}
  const errors: PayloadErrors = {}
  for (const error of validate.errors ?? []) {
    const { field, message } = describe(error)
    const list = (errors[field] ??= [])
    if (!list.includes(message)) list.push(message)
  }
  return errors
}

function describe (error: ErrorObject): { field: string, message: string } {
  const path = error.instancePath.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
  if (error.keyword === 'required') {
    path.push((error.params as { missingProperty: string }).missingProperty)
    return { field: path.join('.'), message: 'is required' }
  }
  if (error.keyword === 'additionalProperties') {
    path.push((error.params as { additionalProperty: string }).additionalProperty)
    return { field: path.join('.'), message: 'is not allowed' }
  }
  return { field: path.length === 0 ? 'payload' : path.join('.'), message: error.message ?? 'is invalid' }
}
