import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, isAbsolute, join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import type { Report } from '../config/config-error.js'
import { compileSchema } from '../plugin/validators.js'
import { isErrorCode } from '../plugin/catalogue.js'
import type { PolicyPlugin } from '../plugin/policy.js'
import type { Catalog, PluginOrigin } from './registry.js'


/**
 * Loads the outside policies of gateway.yaml's `plugins:` (module paths relative to `baseDir`, or package names
 * resolved from `baseDir`) with a dynamic `import()`, checks each default export against the policy contract and
 * adds it to the catalog. Every problem (a module that fails to load, a name or error code that clashes, a
 * schema ajv cannot compile) is reported at `plugins[i]` rather than thrown, so `validate` lists them all.
 */
export async function loadOutsidePlugins (base: Catalog, references: readonly string[], baseDir: string, report: Report): Promise<Catalog> {
  const plugins = new Map(base.plugins)
  const outside = new Map<string, string>()
  // The built-in policies' own codes are taken too: an outside `ip_not_allowed` would make one code name two answers.
  const codes = new Map<string, string>()
  const origins = new Map<string, PluginOrigin>()
  for (const plugin of base.plugins.values()) for (const code of Object.keys(plugin.errors ?? {})) codes.set(code, `built-in policy "${plugin.name}"`)
  for (const [index, reference] of references.entries()) {
    const at = ['plugins', index]
    let exported: unknown
    const specifier = specifierOf(reference, baseDir)
    try {
      exported = ((await import(specifier)) as { default?: unknown }).default
    } catch (error) {
      report(at, `cannot load policy plugin "${reference}": ${(error as Error).message.split('\n')[0] ?? String(error)}`)
      continue
    }
    const problem = contractProblem(exported)
    if (problem !== undefined) {
      report(at, `"${reference}" is not a policy plugin: ${problem}`)
      continue
    }
    const plugin = exported as PolicyPlugin
    if (plugins.has(plugin.name)) {
      const other = outside.get(plugin.name)
      report(at, `policy name "${plugin.name}" is already taken by ${other === undefined ? 'a built-in policy' : `"${other}"`}`)
      continue
    }
    let clash = false
    for (const code of Object.keys(plugin.errors ?? {})) {
      const owner = isErrorCode(code) ? 'the error catalogue' : codes.get(code)
      if (owner !== undefined) {
        report(at, `error code "${code}" of policy "${plugin.name}" is already declared by ${owner}`)
        clash = true
      }
    }
    if (clash) continue
    for (const code of Object.keys(plugin.errors ?? {})) codes.set(code, `policy "${plugin.name}"`)
    plugins.set(plugin.name, plugin)
    outside.set(plugin.name, reference)
    origins.set(plugin.name, originOf(reference, specifier, (exported as { version?: unknown }).version))
  }
  return { plugins, services: base.services, outside, origins }
}

/**
 * The file behind a specifier and a version to log: the plugin object's own `version` string when it has one,
 * else, for a plugin given as a package name, that package's version. A plain file has none ("unversioned").
 */
function originOf (reference: string, specifier: string, declared: unknown): PluginOrigin {
  const file = specifier.startsWith('file:') ? fileURLToPath(specifier) : reference
  if (typeof declared === 'string' && declared !== '') return { reference, file, version: declared }
  const isPackage = !(reference.startsWith('.') || isAbsolute(reference))
  return { reference, file, version: isPackage ? packageVersionAbove(file) : undefined }
}

/** The version in the nearest package.json above `file`. */
function packageVersionAbove (file: string): string | undefined {
  for (let dir = dirname(file); dir !== dirname(dir); dir = dirname(dir)) {
    const manifest = join(dir, 'package.json')
    if (existsSync(manifest)) {
      const version = (JSON.parse(readFileSync(manifest, 'utf8')) as { version?: unknown }).version
      return typeof version === 'string' ? version : undefined
    }
  }
  return undefined
}

/** A relative or absolute path is a file next to gateway.yaml; anything else a package resolved from there. */
function specifierOf (reference: string, baseDir: string): string {
  if (reference.startsWith('.') || isAbsolute(reference)) return pathToFileURL(resolve(baseDir, reference)).href
  try {
    return pathToFileURL(createRequire(join(baseDir, 'gateway.yaml')).resolve(reference)).href
  } catch {
    // An ESM-only package (no `require` condition): let import() resolve it from lanegate's own folder.
    return reference
  }
}

/** Why `value` does not meet the contract of `PolicyPlugin`, or undefined when it does. */
function contractProblem (value: unknown): string | undefined {
  if (value === null || typeof value !== 'object') return 'its default export must be an object'
  const plugin = value as Record<string, unknown>
  if (typeof plugin.name !== 'string' || !/^[a-z][a-z0-9-]*$/.test(plugin.name)) return '`name` must be a lower-case kebab-case string'
  if (typeof plugin.description !== 'string' || plugin.description === '') return '`description` must be a non-empty string'
  if (plugin.schema === null || typeof plugin.schema !== 'object') return '`schema` must be a JSON Schema object'
  try {
    compileSchema(plugin.schema as object, 'policy')
  } catch (error) {
    return `\`schema\` does not compile: ${(error as Error).message}`
  }
  if (typeof plugin.create !== 'function') return '`create` must be a function'
  for (const hook of ['requires', 'check', 'summarize', 'explain', 'refusals'] as const) {
    if (plugin[hook] !== undefined && typeof plugin[hook] !== 'function') return `\`${hook}\` must be a function when given`
  }
  if (plugin.errors !== undefined) {
    if (plugin.errors === null || typeof plugin.errors !== 'object') return '`errors` must map codes to { status, message }'
    for (const [code, entry] of Object.entries(plugin.errors)) {
      const { status, message } = (entry ?? {}) as { status?: unknown, message?: unknown }
      if (!/^[a-z][a-z0-9_]*$/.test(code)) return `error code "${code}" must be snake_case`
      if (typeof status !== 'number' || !Number.isInteger(status) || status < 400 || status > 599) return `error "${code}" needs an integer status from 400 to 599`
      if (typeof message !== 'string' || message === '') return `error "${code}" needs a message`
    }
  }
  return undefined
}
