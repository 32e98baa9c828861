import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv'
import { createRequire } from 'node:module'

/**
 * The one Ajv module: every JSON Schema lanegate checks data against (the config, service settings and bodies,
 * policy options and the request schemas some of them hold, report parameters, fan-out payloads) is compiled here,
 * once per schema, with options per kind of author (Ajv's `strict` and `useDefaults` are per instance, not per schema).
 * It sits in the contract, the bottom layer, because policy options are checked with it; config/ builds on it.
 *
 * An Ajv instance keeps every schema it compiled (its cache and its generated code's scope hold the schema object
 * and the validator) for as long as the instance lives. So only schemas that live as long as the process (module
 * constants, plugins loaded at start) are compiled on the long-lived instance of their author; a schema written in
 * gateway.yaml is compiled on an Ajv of its own, which only its validator references, and goes with the config
 * snapshot that holds it. Otherwise each reload would add its schemas to the process for good.
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
   * payload goes to the lanes exactly as the caller sent it. Lives as long as its config snapshot.
   */
  | 'payload'
  /**
   * A request schema written in gateway.yaml (the `request-validation` policy's body): strict, so a misspelt keyword
   * or an unknown format is a config error rather than a check that never runs; the first error only (the 400 names
   * one); no defaults (the handler reads the request as sent). Lives as long as its config snapshot.
   */
  | 'request'
  /** The same for query and headers, which arrive as strings: coerced to the schema's types (on a copy). */
  | 'coerced-request'

const requestOptions: Options = { allErrors: false, strict: true, strictTypes: false, strictTuples: false, strictRequired: false, useDefaults: false }

const optionsOf: Record<SchemaAuthor, Options> = {
  lanegate: { allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true, useDefaults: true },
  policy: { allErrors: true, strict: false, useDefaults: true },
  payload: { allErrors: true, strict: false, useDefaults: false },
  request: { ...requestOptions, coerceTypes: false },
  'coerced-request': { ...requestOptions, coerceTypes: 'array' },
}

// ajv-formats is CommonJS whose default import is, under NodeNext, the module object on some builds: required, it is
// the function itself.
const addFormats = createRequire(import.meta.url)('ajv-formats') as (ajv: Ajv) => Ajv

/** Authors whose schemas come and go with the config: never compiled on a long-lived instance. */
const writtenInConfig: ReadonlySet<SchemaAuthor> = new Set(['payload', 'request', 'coerced-request'])

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
 * Compiles `schema` on a new Ajv that nothing else references: the validator (and the instance behind it) is
 * collected with whatever holds it. The schema is first checked against the meta-schema by the author's long-lived
 * instance (which keeps nothing of the data it validates): a new instance would compile the meta-schema again, some
 * 20 ms each time.
 */
function compileAlone (schema: object, author: SchemaAuthor): ValidateFunction {
  ajvFor(author).validateSchema(schema, true)
  return addFormats(new Ajv({ ...optionsOf[author], addUsedSchema: false, validateSchema: false })).compile(schema)
}

/**
 * What is wrong with `schema` as a JSON Schema (checked against the meta-schema with the author's options), each
 * error with its path into the schema; none when it is valid. A valid schema may still fail to compile (strict mode).
 */
export function schemaErrors (schema: object, author: SchemaAuthor): ErrorObject[] {
  const ajv = ajvFor(author)
  return ajv.validateSchema(schema) === true ? [] : [...(ajv.errors ?? [])]
}

/**
 * The validator of `schema`, compiled the first time this schema object is seen (schemas are immutable: a config
 * snapshot's, a plugin's, a module's constant); a schema written in the config is compiled alone, so that it is
 * kept only as long as the snapshot. Throws when the schema does not compile.
 */
export function compileSchema (schema: object, author: SchemaAuthor): ValidateFunction {
  let compiled = compiledBy.get(author)
  if (compiled === undefined) {
    compiled = new WeakMap()
    compiledBy.set(author, compiled)
  }
  let validate = compiled.get(schema)
  if (validate === undefined) {
    validate = writtenInConfig.has(author) ? compileAlone(schema, author) : ajvFor(author).compile(schema)
    compiled.set(schema, validate)
  }
  return validate
}

const byText = new Map<string, ValidateFunction>()
const TEXT_CACHE_SIZE = 4

/**
 * For a schema rebuilt as a new object each time from the same parts (the config's, once per load): compiled once
 * per distinct content. The last few are kept (a process sees one or two: the services list rarely changes); each is
 * compiled alone, so one dropped from this cache is freed.
 */
export function compileSchemaByContent (schema: object, author: SchemaAuthor): ValidateFunction {
  const key = `${author}\n${JSON.stringify(schema)}`
  let validate = byText.get(key)
  if (validate === undefined) {
    validate = compileAlone(schema, author)
    if (byText.size >= TEXT_CACHE_SIZE) byText.delete(byText.keys().next().value as string)
    byText.set(key, validate)
  }
  return validate
}
