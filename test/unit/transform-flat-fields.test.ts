import t from 'tap'
import fc from 'fast-check'
import { compileFieldChanges } from '../../plugins/transform/flat-fields.js'
import { changeFields } from '../../plugins/transform/json-fields.js'
import type { JsonBodyChanges } from '../../plugins/transform/schema.js'

/**
 * Top-level field changes built once against the in-place changes they stand in for: the same JSON, keys in the same
 * order (integer-like keys too), the same FieldError, for generated bodies and changes.
 */
const field = fc.constantFrom('a', 'b', 'status', 'state', 'lane', '1', '20', '__proto__', 'constructor')
const value = fc.oneof(fc.string({ maxLength: 3 }), fc.integer(), fc.constant(null), fc.dictionary(fc.constantFrom('x', 'y'), fc.integer(), { maxKeys: 2 }))
const changes = fc.record({
  rename: fc.dictionary(field, fc.oneof(field, fc.constant('a.b')), { maxKeys: 3 }),
  remove: fc.uniqueArray(field, { maxLength: 2 }),
  set: fc.dictionary(field, value, { maxKeys: 2 }),
}, { requiredKeys: [] })
const body = fc.oneof(
  fc.dictionary(field, value, { maxKeys: 6 }),
  fc.dictionary(field, value, { maxKeys: 6 }),
  fc.constant('text'),
  fc.array(value, { maxLength: 2 }),
  fc.constant('{"__proto__": 1, "a": 2}').map((text) => JSON.parse(text) as unknown),
)

function outcome (change: () => unknown): string {
  try {
    return JSON.stringify(change())
  } catch (error) {
    return `${(error as Error).constructor.name}: ${(error as Error).message} at ${(error as { path?: string }).path}`
  }
}

t.test('top-level changes give what the in-place changes give', async (t) => {
  let compared = 0
  fc.assert(fc.property(changes, body, (change, input) => {
    const given = change as JsonBodyChanges
    if (given.rename === undefined && given.remove === undefined && given.set === undefined) return
    const expected = outcome(() => changeFields(structuredClone(input), given))
    const actual = outcome(() => compileFieldChanges(given)(structuredClone(input)))
    if (actual !== expected) throw new Error(`${JSON.stringify(given)} on ${JSON.stringify(input)}: ${actual}, in place ${expected}`)
    compared++
  }), { seed: 44, numRuns: 3000 })
  t.ok(compared > 2000, `${compared} changes compared`)
})
