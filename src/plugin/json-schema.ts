import type { ErrorObject, ValidateFunction } from 'ajv'
import { compileSchema, schemaErrors } from './validators.js'

export type { ErrorObject, ValidateFunction } from 'ajv'

/**
 * JSON Schemas that are themselves policy options (written in gateway.yaml, such as `request-validation`'s), checked
 * through the gateway's one Ajv module (validators.ts) with the options every such schema gets: ajv strict
 * mode (an unknown keyword or format is an error, not a check that never runs), `ajv-formats`, the first error only,
 * no defaults filled in. A compiled schema is kept as long as the schema object, so it goes with its config snapshot.
 */

/** The validator of `schema`; `coerce: true` converts strings to the schema's types (query and headers arrive as strings). */
export function compileOptionSchema (schema: object, options: { coerce?: boolean } = {}): ValidateFunction {
  return compileSchema(schema, options.coerce === true ? 'coerced-request' : 'request')
}

/** What is wrong with `schema` (for a policy's `check`): paths are JSON Pointers into the schema; none when it compiles. */
export function optionSchemaProblems (schema: object): { path: string, message: string }[] {
  const invalid: ErrorObject[] = schemaErrors(schema, 'request')
  if (invalid.length > 0) return invalid.map((e) => ({ path: e.instancePath, message: `not a valid JSON Schema: ${e.message ?? e.keyword}` }))
  try {
    compileOptionSchema(schema)
    return []
  } catch (error) {
    return [{ path: '', message: `not a usable JSON Schema: ${(error as Error).message}` }]
  }
}
