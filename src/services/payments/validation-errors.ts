import type { ErrorObject } from 'ajv'
import { GatewayError } from '../../plugin/gateway-error.js'

/** `{field: [messages]}`, the `errors` field of a 422 validation_failed. */
export type FieldErrors = Record<string, string[]>

/** Adds a message to a field, once. */
export function addFieldError (errors: FieldErrors, field: string, message: string): void {
  const list = errors[field] ?? (errors[field] = [])
  if (!list.includes(message)) list.push(message)
}

/**
 * Turns ajv errors into field errors: the field is the dotted path of the offending value (`metadata.order`),
 * the missing or unknown property itself for `required` / `additionalProperties`, `body` for the body itself.
 */
export function fieldErrorsOf (ajvErrors: readonly ErrorObject[], root = 'body', into: FieldErrors = {}): FieldErrors {
  for (const e of ajvErrors) {
    const path = e.instancePath.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    if (e.keyword === 'required') {
      addFieldError(into, [...path, (e.params as { missingProperty: string }).missingProperty].join('.'), 'is required')
    } else if (e.keyword === 'additionalProperties') {
      addFieldError(into, [...path, (e.params as { additionalProperty: string }).additionalProperty].join('.'), 'is not allowed')
    } else if (e.keyword === 'enum') {
      const allowed = (e.params as { allowedValues: unknown[] }).allowedValues.join(', ')
      addFieldError(into, path.length === 0 ? root : path.join('.'), `must be one of: ${allowed}`)
    } else {
      addFieldError(into, path.length === 0 ? root : path.join('.'), e.message ?? 'is invalid')
    }
  }
  return into
}

/** Throws 422 validation_failed with the field errors when there are any. */
export function throwIfInvalid (errors: FieldErrors, message?: string): void {
  if (Object.keys(errors).length > 0) throw new GatewayError('validation_failed', { message, fields: { errors } })
}
