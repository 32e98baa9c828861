import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv'
import addFormats from 'ajv-formats'
import type { PolicyPlugin } from './policy.js'

const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: false })
addFormats.default(ajv)
const compiled = new WeakMap<object, ValidateFunction>()

/**
 * Checks a policy's options against its schema and fills its defaults in place (ajv `useDefaults`): the one way
 * options get their defaults, for gateway.yaml (the loader's second pass) and for the single-policy test harness
 * alike. Returns ajv's errors, empty when the options are valid.
 */
export function checkPolicyOptions (plugin: PolicyPlugin, options: unknown): ErrorObject[] {
  let validate = compiled.get(plugin.schema)
  if (validate === undefined) {
    validate = ajv.compile(plugin.schema)
    compiled.set(plugin.schema, validate)
  }
  return validate(options) ? [] : [...(validate.errors ?? [])]
}

/** A copy of `options` with the policy's defaults filled in; throws when the schema refuses them. */
export function policyOptions<Options> (plugin: PolicyPlugin<Options>, options: unknown): Options {
  const copy = structuredClone(options ?? {})
  const errors = checkPolicyOptions(plugin, copy)
  if (errors.length > 0) {
    throw new Error(`options of policy "${plugin.name}" refused: ${errors.map((e) => `${e.instancePath || '/'} ${e.message ?? e.keyword}`).join('; ')}`)
  }
  return copy as Options
}
