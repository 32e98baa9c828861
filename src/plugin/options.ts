import type { ErrorObject } from 'ajv'
import { compileSchema } from './validators.js'
import type { PolicyPlugin } from './policy.js'

/**
 * Checks a policy's options against its schema and fills its defaults in place (ajv `useDefaults`): the one way
 * options get their defaults, for gateway.yaml (the loader's second pass) and for the single-policy test harness
 * alike. Returns ajv's errors, empty when the options are valid.
 */
export function checkPolicyOptions (plugin: PolicyPlugin, options: unknown): ErrorObject[] {
  const validate = compileSchema(plugin.schema, 'policy')
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
