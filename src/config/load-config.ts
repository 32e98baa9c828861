import { readFile } from 'node:fs/promises'
import { dirname, resolve } from 'node:path'
import type { ErrorObject } from 'ajv'
import { LineCounter, parseDocument, isMap, isNode, isScalar, type Document } from 'yaml'
import { ConfigError, formatPath, type ConfigProblem } from './config-error.js'
import { deepFreeze } from './deep-freeze.js'
import { defaultIssuer } from './default-issuer.js'
import { substituteEnv } from './env-substitution.js'
import { keepIndexes, type ConfigIndexes } from './indexes.js'
import { resolveConfigPaths } from './resolve-paths.js'
import { buildConfigSchema, type ServiceSchema } from './schema.js'
import { checkReferences, type ConfigWarning, type LocatedProblem } from './semantic-checks.js'
import type { ListenerFiles } from './tls-files.js'
import type { GatewayConfig } from './types.js'
import { compileSchemaByContent } from '../plugin/validators.js'

/** What the second pass found beyond config/'s own reference checks, and what it built on the way. */
export interface SecondPass<Catalog> {
  problems: LocatedProblem[]
  warnings: ConfigWarning[]
  /** What the checks were made against (the pipeline: built-in and loaded policies, services). */
  catalog: Catalog
}

/**
 * What validation knows beyond the file, passed in by the pipeline so that config/ imports nothing above it:
 * the services' schemas (first pass) and the checks of policies, plugins and services (second pass).
 */
export interface ConfigRules<Catalog = unknown> {
  readonly services: readonly ServiceSchema[]
  /**
   * The second pass: loads `plugins:` (relative to `baseDir`), checks every chain and service. Runs on a config
   * whose structure passed, or failed only in ways that keep its shape (unknown keys, bad values), so that
   * `validate` shows both passes' problems together.
   */
  check (config: GatewayConfig, context: { baseDir: string, indexes: ConfigIndexes }): Promise<SecondPass<Catalog>>
}

export interface LoadedConfig<Catalog = unknown> {
  /** Deep-frozen: a request, a cache keyed on it, or a reload never sees it change. */
  config: GatewayConfig
  warnings: ConfigWarning[]
  /** The file's text, so a reload can tell whether anything changed. */
  source: string
  catalog: Catalog
  /** `server.tls`'s files as validation read them: the listener starts with these (not read again). */
  listenerTls?: ListenerFiles
}

export interface ParseOptions<Catalog> {
  env?: NodeJS.ProcessEnv
  /**
   * Changes made to the config before the second pass checks it (tests' data_dir, `start --port`), so the policies'
   * checks, the default issuer and the settings view see the config as it is served.
   */
  adjust?: (loaded: Pick<LoadedConfig<Catalog>, 'config'>) => void
}

/** Reads, substitutes and validates a config file; throws ConfigError listing every problem. */
export async function loadConfigFile<Catalog> (file: string, rules: ConfigRules<Catalog>, options: ParseOptions<Catalog> = {}): Promise<LoadedConfig<Catalog>> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    throw new ConfigError(file, [{ path: '', message: `cannot read the file: ${(error as Error).message}` }])
  }
  return parseConfigText(text, file, rules, options)
}

/** First-pass error keywords after which the config still has the shape the second pass reads. */
const shapeKeeping = new Set(['additionalProperties', 'enum', 'pattern', 'minimum', 'maximum', 'minLength', 'maxLength', 'format', 'uniqueItems', 'propertyNames'])

/**
 * Validates config text in two passes (structure, then references, policies and service settings) and reports
 * the problems of both together. Paths in `plugins:` are relative to the folder of `file`.
 */
export async function parseConfigText<Catalog> (text: string, file: string, rules: ConfigRules<Catalog>, options: ParseOptions<Catalog> = {}): Promise<LoadedConfig<Catalog>> {
  const env = options.env ?? process.env
  const lineCounter = new LineCounter()
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true })
  if (doc.errors.length > 0) {
    throw new ConfigError(file, doc.errors.map((e) => ({
      path: '',
      line: lineCounter.linePos(e.pos[0]).line,
      message: `YAML syntax: ${e.message.split('\n')[0] ?? e.message}`,
    })))
  }
  const locate = (problem: ConfigProblem, segments: (string | number)[]): ConfigProblem =>
    ({ ...problem, line: problem.line ?? lineOf(doc, lineCounter, segments) })

  const problems: ConfigProblem[] = []
  const raw = doc.toJS({ maxAliasCount: 100 }) as unknown
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ConfigError(file, [{ path: '', line: 1, message: 'the file must hold a mapping (key: value pairs)' }])
  }
  const substituted = substituteEnv(raw, env, problems)
  if (problems.length > 0) throw new ConfigError(file, problems.map((p) => locate(p, parsePath(p.path))))

  // Pass 1: structure.
  const validate = compileSchemaByContent(buildConfigSchema(rules.services), 'lanegate')
  const structural = untypedServices(validate(substituted) ? [] : validate.errors ?? [])
  const first = dedupe(withoutNameSummaries(structural).map((e) => {
    const segments = errorPath(e)
    return locate({ path: formatPath(segments), message: describeAjvError(e) }, segments)
  }))
  if (!structural.every((e) => shapeKeeping.has(e.keyword))) throw new ConfigError(file, first)
  const config = substituted as GatewayConfig
  resolveConfigPaths(config, file)

  // Pass 2: references between sections (here), then policies, plugins and service settings (the rules).
  let second: SecondPass<Catalog>
  let references: ReturnType<typeof checkReferences>
  try {
    options.adjust?.({ config })
    defaultIssuer(config)
    references = checkReferences(config)
    second = await rules.check(config, { baseDir: dirname(resolve(file)), indexes: keepIndexes(config) })
  } catch (error) {
    // Only a config with first-pass problems may trip a check; those problems are the ones to show.
    if (first.length > 0) throw new ConfigError(file, first)
    throw error
  }
  const semantic = [...references.problems, ...second.problems].map((p) => locate(p.problem, p.segments))
  if (first.length > 0 || semantic.length > 0) throw new ConfigError(file, dedupe([...first, ...semantic]))
  const loaded: LoadedConfig<Catalog> = {
    config,
    warnings: [...references.warnings, ...second.warnings].map((w) => ({ ...w, line: w.line ?? lineOf(doc, lineCounter, parsePath(w.path)) })),
    source: text,
    catalog: second.catalog,
    listenerTls: references.listenerTls,
  }
  deepFreeze(config)
  return loaded
}

/** A bad key name is reported once, by the rule it breaks (`must match pattern …`), not also as "property name must be valid". */
function withoutNameSummaries (errors: ErrorObject[]): ErrorObject[] {
  return errors.filter((e) => e.keyword !== 'propertyNames' || !errors.some((other) => other.propertyName !== undefined && other.instancePath === e.instancePath))
}

/** A block under `services:` without `type` and not named after a fixed service. */
function isUntypedService (e: ErrorObject): boolean {
  return e.keyword === 'required' && (e.params as { missingProperty?: string }).missingProperty === 'type' && /^\/services\/[^/]+$/.test(e.instancePath)
}

/**
 * An unknown service name is one problem, not every key the service type would have wanted: the errors below a
 * block that names no fixed service and selects no type are dropped.
 */
function untypedServices (errors: ErrorObject[]): ErrorObject[] {
  const untyped = errors.filter(isUntypedService).map((e) => e.instancePath)
  if (untyped.length === 0) return errors
  return errors.filter((e) => isUntypedService(e) || !untyped.some((path) => e.instancePath === path || e.instancePath.startsWith(`${path}/`)))
}

function describeAjvError (e: ErrorObject): string {
  if (isUntypedService(e)) return 'unknown service: not a fixed service\'s name, and no `type` (e.g. `type: proxy`) selects a service type'
  switch (e.keyword) {
    case 'additionalProperties':
      return `unknown key "${String((e.params as { additionalProperty: string }).additionalProperty)}"`
    case 'required':
      return `missing required key "${String((e.params as { missingProperty: string }).missingProperty)}"`
    case 'enum':
      return `must be one of: ${((e.params as { allowedValues: unknown[] }).allowedValues).join(', ')}`
    case 'minProperties':
    case 'maxProperties':
      return 'a policy entry must have exactly one key, the policy name'
    default:
      return e.message ?? 'invalid value'
  }
}

function errorPath (e: ErrorObject): (string | number)[] {
  const segments = parsePointer(e.instancePath)
  // An error of a key's name (under `propertyNames`) is placed at that key.
  if (e.propertyName !== undefined) segments.push(e.propertyName)
  if (e.keyword === 'additionalProperties') segments.push((e.params as { additionalProperty: string }).additionalProperty)
  if (e.keyword === 'propertyNames') segments.push(String((e.params as { propertyName?: string }).propertyName ?? ''))
  return segments
}

function parsePointer (pointer: string): (string | number)[] {
  if (pointer === '') return []
  return pointer.slice(1).split('/').map((s) => {
    const key = s.replace(/~1/g, '/').replace(/~0/g, '~')
    return /^\d+$/.test(key) ? Number(key) : key
  })
}

/** Inverse of formatPath, for locating problems found by path string. */
export function parsePath (path: string): (string | number)[] {
  const segments: (string | number)[] = []
  for (const match of path.matchAll(/([^.[\]]+)|\[(\d+)\]/g)) {
    if (match[2] !== undefined) segments.push(Number(match[2]))
    else if (match[1] !== undefined) segments.push(match[1])
  }
  return segments
}

/** Line of the deepest node of `segments` that exists in the document (1-based). */
function lineOf (doc: Document, lineCounter: LineCounter, segments: (string | number)[]): number | undefined {
  // A mapping key points at the key's own line (`routes:\n  helo:` names the line of `helo:`).
  const last = segments[segments.length - 1]
  if (typeof last === 'string') {
    const parent = segments.length === 1 ? doc.contents : doc.getIn(segments.slice(0, -1), true)
    if (isMap(parent)) {
      const pair = parent.items.find((item) => isScalar(item.key) && String(item.key.value) === last)
      if (pair && isNode(pair.key) && pair.key.range) return lineCounter.linePos(pair.key.range[0]).line
    }
  }
  for (let depth = segments.length; depth >= 0; depth--) {
    const node = depth === 0 ? doc.contents : doc.getIn(segments.slice(0, depth), true)
    if (isNode(node) && node.range) return lineCounter.linePos(node.range[0]).line
  }
  return undefined
}

function dedupe (problems: ConfigProblem[]): ConfigProblem[] {
  const seen = new Set<string>()
  return problems.filter((p) => {
    const key = `${p.path}\0${p.message}`
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}
