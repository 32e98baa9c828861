import { Ajv, type Options, type ValidateFunction } from 'ajv'
import addFormatsModule from 'ajv-formats'

/**
 * The one Ajv module: every JSON Schema lanegate checks data against (the config, service settings and bodies,
 * policy options, report parameters, fan-out payloads) is compiled here, once per schema, on one Ajv instance per
 * kind of author (Ajv's `strict` and `useDefaults` are per instance, not per schema).
 */
export type SchemaAuthor =
  /**
   * lanegate's own schemas (the config, service settings and request bodies, content items, built-in reports):
   * strict mode, so a typo in a keyword fails at start; defaults are filled in place.
   */
  | 'lanegate'
  /** Policy options (built-in and outside plugins alike): unknown keywords allowed; defaults filled in place. */
  | 'policy'
  /**
   * A payload schema written in gateway.yaml (fan-out operations): unknown keywords allowed, and no defaults — the
   * payload goes to the lanes exactly as the caller sent it.
   */
  | 'payload'

const optionsOf: Record<SchemaAuthor, Options> = {
  lanegate: { allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true, useDefaults: true },
  policy: { allErrors: true, strict: false, useDefaults: true },
  payload: { allErrors: true, strict: false, useDefaults: false },
}

// ajv-formats is CommonJS; under NodeNext its default import is the module object on some builds.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as
  unknown as (ajv: Ajv) => Ajv

const instances = new Map<SchemaAuthor, Ajv>()
const compiledBy = new Map<SchemaAuthor, WeakMap<object, ValidateFunction>>()

function ajvFor (author: SchemaAuthor): Ajv {
  let ajv = instances.get(author)
  if (ajv === undefined) {
    // `addUsedSchema: false`: a schema's `$id` is not registered, so two schemas (or two reloads of one) that
    // reuse an `$id` never clash.
    ajv = addFormats(new Ajv({ ...optionsOf[author], addUsedSchema: false }))
    instances.set(author, ajv)
  }
  return ajv
}

/**
 * The validator of `schema`, compiled the first time this schema object is seen (schemas are immutable: a config
 * snapshot's, a plugin's, a module's constant). Throws when the schema does not compile.
 */
export function compileSchema (schema: object, author: SchemaAuthor): ValidateFunction {
  let compiled = compiledBy.get(author)
  if (compiled === undefined) {
    compiled = new WeakMap()
    compiledBy.set(author, compiled)
  }
  let validate = compiled.get(schema)
  if (validate === undefined) {
    validate = ajvFor(author).compile(schema)
    compiled.set(schema, validate)
  }
  return validate
}

const byText = new Map<string, ValidateFunction>()
const TEXT_CACHE_SIZE = 4

/**
 * For a schema rebuilt as a new object each time from the same parts (the config's, once per load): compiled once
 * per distinct content. The last few are kept (a process sees one or two: the services list rarely changes).
 */
export function compileSchemaByContent (schema: object, author: SchemaAuthor): ValidateFunction {
  const key = `${author}\n${JSON.stringify(schema)}`
  let validate = byText.get(key)
  if (validate === undefined) {
    validate = ajvFor(author).compile(schema)
    if (byText.size >= TEXT_CACHE_SIZE) byText.delete(byText.keys().next().value as string)
    byText.set(key, validate)
  }
  return validate
}
