import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv'
import addFormatsModule from 'ajv-formats'

// ajv-formats is CommonJS; under NodeNext its default import is the module object on some builds.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as
  unknown as (ajv: Ajv) => Ajv

/** The three parts of a request a schema may describe. */
export type Part = 'query' | 'body' | 'headers'

/** One failed check, as the 400 reports it. */
export interface Failure {
  readonly location: Part
  /** JSON Pointer into the part (`/amount`); `''` for the whole part. */
  readonly path: string
  readonly keyword: string
  readonly message: string
}

/**
 * An Ajv for one route's schemas. Strict: an unknown keyword (`minimun`) or format is a config error, not a check
 * that silently never runs. Query and headers arrive as strings, so they are coerced — on a copy, never on what
 * the handler reads. One instance per chain build: Ajv keeps every schema it compiled, so a shared instance would
 * keep every reload's schemas for the life of the process.
 */
export function routeAjv (coerce: boolean): Ajv {
  return addFormats(new Ajv({ allErrors: false, strict: true, strictTypes: false, strictTuples: false, strictRequired: false, coerceTypes: coerce ? 'array' : false, useDefaults: false }))
}

/** Problems with a schema itself (as `check` reports them, below the option's path); none when it compiles. */
export function schemaProblems (schema: Record<string, unknown>): { path: string, message: string }[] {
  const ajv = routeAjv(false)
  if (ajv.validateSchema(schema) !== true) {
    return (ajv.errors ?? []).map((e) => ({ path: e.instancePath, message: `not a valid JSON Schema: ${e.message ?? e.keyword}` }))
  }
  try {
    ajv.compile(schema)
    return []
  } catch (error) {
    return [{ path: '', message: `not a usable JSON Schema: ${(error as Error).message}` }]
  }
}

/** Compiles a part's schema for one route. */
export function compilePart (schema: Record<string, unknown>, part: Part): ValidateFunction {
  return routeAjv(part !== 'body').compile(schema)
}

/** The first error as a failure; a missing or extra property is pointed at by name. */
export function failureOf (location: Part, errors: readonly ErrorObject[] | null | undefined): Failure {
  const error = errors?.[0]
  if (error === undefined) return { location, path: '', keyword: 'schema', message: `${location} does not match its schema` }
  const params = error.params as { missingProperty?: string, additionalProperty?: string }
  const name = params.missingProperty ?? params.additionalProperty
  const path = name === undefined ? error.instancePath : `${error.instancePath}/${escapePointer(name)}`
  return { location, path, keyword: error.keyword, message: `${location} ${path === '' ? '' : `${path} `}${error.message ?? 'does not match its schema'}` }
}

function escapePointer (name: string): string {
  return name.replaceAll('~', '~0').replaceAll('/', '~1')
}
