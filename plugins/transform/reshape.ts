import type { JsonBodyChanges } from './schema.js'
import { FieldError } from './json-fields.js'
import { compileFieldChanges } from './flat-fields.js'
import { compileMapping, MappingError, runMapping, type Mapping } from './mapping.js'
import { OUTSIDE, plainMapping, type PlainMapping } from './plain-mapping.js'

/** One direction's JSON body changes, built once per chain: field changes, then the mapping. */
export interface Reshape {
  readonly fields: ((body: unknown) => unknown) | undefined
  readonly mapping: Mapping | undefined
  /** The mapping as a plain function, when its expression is a plain one (plain-mapping.ts). */
  readonly plain: PlainMapping | undefined
}

export function compileReshape (changes: JsonBodyChanges, mapTimeoutMs: number): Reshape {
  const hasFields = changes.rename !== undefined || changes.remove !== undefined || changes.set !== undefined
  const mapping = changes.map === undefined ? undefined : compileMapping(changes.map, mapTimeoutMs)
  return { fields: hasFields ? compileFieldChanges(changes) : undefined, mapping, plain: mapping === undefined ? undefined : plainMapping(mapping) }
}

/** Where and why a reshaping failed, for the caller's `transform_failed` or the upstream's `protocol` failure. */
export interface ReshapeFailure {
  readonly path: string
  readonly message: string
  readonly position?: number
  /** The mapping ran past `map_timeout_ms`: the route's expression, not the body, is at fault. */
  readonly timedOut?: boolean
}

/**
 * Applies the changes to a parsed body (the fields, then the mapping over the result). Resolves the new
 * body, or a ReshapeFailure naming the path (a dotted path, or `map`). Synchronous when there is no mapping, or a
 * plain one that covers the body.
 */
export function reshape (plan: Reshape, body: unknown, bindings: () => Record<string, unknown>): unknown | ReshapeFailure | Promise<unknown | ReshapeFailure> {
  let current = body
  if (plan.fields !== undefined) {
    try {
      current = plan.fields(current)
    } catch (error) {
      if (error instanceof FieldError) return failure(error.path, `cannot change field ${error.path === '' ? 'of the body' : `"${error.path}"`}: ${error.message}`)
      throw error
    }
  }
  if (plan.mapping === undefined) return current
  const bound = bindings()
  const plain = plan.plain === undefined ? OUTSIDE : plan.plain(current, bound)
  if (plain !== OUTSIDE) return plain === undefined ? failure('map', 'the mapping failed: the mapping gave no value') : plain
  return runMapping(plan.mapping, current, bound).catch(function mappingFailed (error: unknown) {
    if (error instanceof MappingError && error.timedOut) return Object.assign(failure('map', 'the mapping ran longer than its time limit'), { timedOut: true })
    if (error instanceof MappingError) return failure('map', `the mapping failed: ${error.message}`, error.position)
    throw error
  })
}

const FAILED = Symbol('reshape failure')

function failure (path: string, message: string, position?: number): ReshapeFailure {
  return Object.assign(position === undefined ? { path, message } : { path, message, position }, { [FAILED]: true })
}

export function isReshapeFailure (value: unknown): value is ReshapeFailure {
  return typeof value === 'object' && value !== null && FAILED in value
}
