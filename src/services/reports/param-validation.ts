import type { ErrorObject, ValidateFunction } from 'ajv'
import { compileSchema } from '../../plugin/validators.js'
import type { ParamErrors, ReportDefinition } from './report-definition.js'

function validator (report: ReportDefinition): ValidateFunction {
  return compileSchema(report.parameter_schema, 'lanegate')
}

/**
 * Checks a run body against the report's schema, then its own cross-field checks. Returns the parameters with
 * schema defaults applied, or the errors map (keys are parameter names; `body` for the body itself).
 */
export function validateParams (report: ReportDefinition, body: unknown): { params: Record<string, unknown> } | { errors: ParamErrors } {
  const input = body === undefined || body === null ? {} : body
  if (typeof input !== 'object' || Array.isArray(input)) return { errors: { body: ['must be a JSON object of parameters'] } }
  const params = structuredClone(input) as Record<string, unknown>
  const validate = validator(report)
  if (!validate(params)) return { errors: toErrors(validate.errors ?? []) }
  const extra = report.check?.(params) ?? {}
  return Object.keys(extra).length > 0 ? { errors: extra } : { params }
}

function toErrors (list: ErrorObject[]): ParamErrors {
  const errors: ParamErrors = {}
  for (const e of list) {
    const [name, message] = describe(e)
    const messages = errors[name] ??= []
    if (!messages.includes(message)) messages.push(message)
  }
  return errors
}

function describe (e: ErrorObject): [string, string] {
  const path = e.instancePath.split('/').slice(1).join('.')
  switch (e.keyword) {
    case 'required': return [(e.params as { missingProperty: string }).missingProperty, 'is required']
    case 'additionalProperties': return [joinPath(path, (e.params as { additionalProperty: string }).additionalProperty), 'is not an accepted parameter']
    case 'format': return [path || 'body', `must be a valid ${(e.params as { format: string }).format === 'date' ? 'date (YYYY-MM-DD)' : (e.params as { format: string }).format}`]
    case 'enum': return [path || 'body', `must be one of: ${((e.params as { allowedValues: unknown[] }).allowedValues).join(', ')}`]
    default: return [path || 'body', e.message ?? 'is invalid']
  }
}

function joinPath (path: string, name: string): string {
  return path === '' ? name : `${path}.${name}`
}
