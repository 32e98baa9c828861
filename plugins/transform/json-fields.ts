import type { JsonBodyChanges } from './schema.js'

/** A field change that cannot be made: `path` is the dotted path where it failed. */
export class FieldError extends Error {
  constructor (readonly path: string, message: string) {
    super(message)
  }
}

type Container = Record<string, unknown> | unknown[]

function isContainer (value: unknown): value is Container {
  return typeof value === 'object' && value !== null
}

/** Keys that would reach an object's prototype: never walked or written. */
const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype'])

/** Whether a field name is one a transform may not use (a change naming it fails with a FieldError). */
export function isForbiddenField (name: string): boolean {
  return FORBIDDEN.has(name)
}

function segmentsOf (path: string): string[] {
  const segments = path.split('.')
  for (const segment of segments) if (FORBIDDEN.has(segment)) throw new FieldError(path, `"${segment}" is not a field name a transform may use`)
  return segments
}

/** The container holding the last segment of `path`, or undefined when a step on the way is absent. */
function parentOf (body: unknown, segments: readonly string[], path: string, create: boolean): Container | undefined {
  let current = body
  for (let i = 0; i < segments.length - 1; i++) {
    const segment = segments[i] as string
    const here = segments.slice(0, i).join('.')
    if (!isContainer(current)) throw new FieldError(here || path, `${here || 'the body'} is not an object or array`)
    if (Array.isArray(current) && !/^\d+$/.test(segment)) throw new FieldError(here || path, `${here || 'the body'} is an array: "${segment}" is not an index`)
    let next = (current as Record<string, unknown>)[segment]
    if (next === undefined && create) {
      next = {}
      ;(current as Record<string, unknown>)[segment] = next
    }
    if (next === undefined) return undefined
    current = next
  }
  if (!isContainer(current)) throw new FieldError(segments.slice(0, -1).join('.') || path, `${segments.slice(0, -1).join('.') || 'the body'} is not an object or array`)
  return current
}

function take (body: unknown, path: string): { found: boolean, value: unknown } {
  const segments = segmentsOf(path)
  const parent = parentOf(body, segments, path, false)
  const key = segments[segments.length - 1] as string
  if (parent === undefined || !Object.hasOwn(parent, key)) return { found: false, value: undefined }
  const value = (parent as Record<string, unknown>)[key]
  if (Array.isArray(parent)) parent.splice(Number(key), 1)
  else delete parent[key]
  return { found: true, value }
}

function put (body: unknown, path: string, value: unknown): void {
  const segments = segmentsOf(path)
  const parent = parentOf(body, segments, path, true) as Container
  const key = segments[segments.length - 1] as string
  if (Array.isArray(parent) && !/^\d+$/.test(key)) throw new FieldError(path, `${segments.slice(0, -1).join('.')} is an array: "${key}" is not an index`)
  ;(parent as Record<string, unknown>)[key] = value
}

/**
 * Applies `rename`, `remove` and `set` (in that order) to a parsed JSON body, in place; returns it. A body that
 * is not an object or array, or a path through a scalar, throws a FieldError naming the path.
 */
export function changeFields (body: unknown, changes: JsonBodyChanges): unknown {
  if ((changes.rename !== undefined || changes.remove !== undefined || changes.set !== undefined) && !isContainer(body)) {
    throw new FieldError('', 'the body is not a JSON object or array')
  }
  for (const [from, to] of Object.entries(changes.rename ?? {})) {
    const taken = take(body, from)
    if (taken.found) put(body, to, taken.value)
  }
  for (const path of changes.remove ?? []) take(body, path)
  // structuredClone: a configured value is shared by every request and must not be changed by a later step.
  for (const [path, value] of Object.entries(changes.set ?? {})) put(body, path, typeof value === 'object' && value !== null ? structuredClone(value) : value)
  return body
}
