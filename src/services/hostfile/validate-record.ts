import type { FieldKind, FieldSpec, RecordTypeSpec } from './record-types.js'

/** Field name → messages, the `errors` map of `hostfile_record_validation_failed`. */
export type FieldErrors = Record<string, string[]>

/** The keys every record carries besides its fields. */
export const envelopeKeys = ['record_type', 'action_code'] as const

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/
const MONEY = /^\d{1,5}\.\d{2}$/
// Characters that would break the pipe-delimited line structure of the file.
const UNSAFE_TEXT = /[|\r\n]/

/**
 * Checks one record's fields against its type's spec. `null` counts as absent. Returns an empty map when the
 * record is valid; otherwise every problem of the record (not only the first), keyed by snake_case field name.
 */
export function validateRecordFields (record: Record<string, unknown>, typeName: string, spec: RecordTypeSpec, actionCode: string): FieldErrors {
  const errors: FieldErrors = {}
  const add = (field: string, message: string): void => { (errors[field] ??= []).push(message) }
  const isDelete = actionCode === 'D'
  const known = new Map<string, FieldSpec>(spec.fields.map((f) => [f.name, f]))

  for (const name of Object.keys(record)) {
    if ((envelopeKeys as readonly string[]).includes(name)) continue
    if (!known.has(name)) add(name, `is not a field of ${typeName}`)
  }

  for (const field of spec.fields) {
    const value = record[field.name]
    const present = value !== undefined && value !== null
    if (!present) {
      if (field.key === true) add(field.name, 'is required')
      else if (field.required === true && !isDelete) add(field.name, 'is required')
      continue
    }
    if (isDelete && field.key !== true) {
      add(field.name, 'is not allowed on a delete (D) record, which carries only its key fields')
      continue
    }
    const problem = checkKind(value, field.kind)
    if (problem !== undefined) add(field.name, problem)
  }

  for (const rule of spec.rules ?? []) {
    if (errors[rule.field] !== undefined || errors[rule.other] !== undefined) continue
    const value = record[rule.field]
    const other = record[rule.other]
    if (typeof value === 'string' && typeof other === 'string' && value < other) {
      add(rule.field, `must not be before ${rule.other}`)
    }
  }
  return errors
}

/** The message for a value that does not fit its kind, or undefined when it fits. */
function checkKind (value: unknown, kind: FieldKind): string | undefined {
  switch (kind.type) {
    case 'code':
      if (typeof value !== 'string') return 'must be a string'
      return kind.pattern.test(value) ? undefined : `must be ${kind.hint}`
    case 'text':
      if (typeof value !== 'string') return 'must be a string'
      if (value.length === 0 || value.length > kind.maxLength) return `must be 1 to ${kind.maxLength} characters`
      return UNSAFE_TEXT.test(value) ? 'must not contain |, CR or LF' : undefined
    case 'money':
      if (typeof value !== 'string') return 'must be a string in the format xxxxx.xx'
      return MONEY.test(value) ? undefined : 'must match the format xxxxx.xx (1 to 5 digits, a dot, 2 digits)'
    case 'date':
      if (typeof value !== 'string') return 'must be a string in the format YYYY-MM-DD'
      return isCalendarDate(value) ? undefined : 'must be a calendar date in the format YYYY-MM-DD'
    case 'integer':
      if (typeof value !== 'number' || !Number.isInteger(value)) return 'must be an integer'
      return value >= kind.min && value <= kind.max ? undefined : `must be between ${kind.min} and ${kind.max}`
    case 'flag':
      return typeof value === 'boolean' ? undefined : 'must be true or false'
    case 'enum':
      return typeof value === 'string' && kind.values.includes(value) ? undefined : `must be one of: ${kind.values.join(', ')}`
  }
}

function isCalendarDate (value: string): boolean {
  const match = DATE.exec(value)
  if (match === null) return false
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])]
  const date = new Date(Date.UTC(year, month - 1, day))
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day
}

/** A field's value as written in the file: booleans as Y/N, absent values as empty. */
export function renderValue (value: unknown): string {
  if (value === undefined || value === null) return ''
  if (typeof value === 'boolean') return value ? 'Y' : 'N'
  return String(value)
}
