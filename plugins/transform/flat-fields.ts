import { changeFields, FieldError, isForbiddenField } from './json-fields.js'
import type { JsonBodyChanges } from './schema.js'

/**
 * The field changes of one route, built once. Where every path is a top-level name (`status`, not `order.status`),
 * an object body's changes are made on its entries and the object is built again once, where changing it in place
 * (json-fields.ts) deletes keys: V8 then turns the object into a slow dictionary, and JSON.stringify takes its slow
 * path over it. Same result, key order included (test/unit/transform-flat-fields.test.ts compares the two). Nested
 * paths, arrays, and a body with a `__proto__` key are changed in place as before.
 */
export function compileFieldChanges (changes: JsonBodyChanges): (body: unknown) => unknown {
  const renames = Object.entries(changes.rename ?? {})
  const removes = changes.remove ?? []
  const sets = Object.entries(changes.set ?? {})
  const paths = [...renames.flat(), ...removes, ...sets.map(([path]) => path)]
  const inPlace = (body: unknown) => changeFields(body, changes)
  if (paths.some((path) => path.includes('.') || isForbiddenField(path))) return inPlace

  return function changeTopLevelFields (body) {
    if (typeof body !== 'object' || body === null) throw new FieldError('', 'the body is not a JSON object or array')
    if (Array.isArray(body) || Object.hasOwn(body, '__proto__')) return inPlace(body)
    const fields = new Map(Object.entries(body))
    for (const [from, to] of renames) {
      if (!fields.has(from)) continue
      const value = fields.get(from)
      fields.delete(from)
      fields.set(to, value)
    }
    for (const path of removes) fields.delete(path)
    // structuredClone: a configured value is shared by every request and must not be changed by a later step.
    for (const [path, value] of sets) fields.set(path, typeof value === 'object' && value !== null ? structuredClone(value) : value)
    const out: Record<string, unknown> = {}
    for (const [key, value] of fields) out[key] = value
    return out
  }
}
