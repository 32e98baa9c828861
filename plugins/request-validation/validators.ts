import { compileOptionSchema, type ErrorObject, type ValidateFunction } from '../../src/plugin/index.js'

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
 * Compiles a part's schema for one route, strict (an unknown keyword or format is a config error). Query and
 * headers arrive as strings, so they are coerced — on a copy, never on what the handler reads.
 */
export function compilePart (schema: Record<string, unknown>, part: Part): ValidateFunction {
  return compileOptionSchema(schema, { coerce: part !== 'body' })
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
