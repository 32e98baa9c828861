import t from 'tap'
import fc from 'fast-check'
import jsonata from 'jsonata'
import { OUTSIDE, plainMapping } from '../../plugins/transform/plain-mapping.js'

/**
 * Plain mappings against JSONata itself: for generated expressions of the plain subset (and some just outside it)
 * over generated bodies and bindings, the plain function must give JSONata's result (same JSON, same kind of
 * object) or leave the evaluation to JSONata; never a different value, never an error of its own.
 */
const field = fc.constantFrom('a', 'b', 'sku', 'qty', 'status', 'constructor', '__proto__', 'toString')
const start = fc.oneof({ arbitrary: fc.constantFrom('', '', '$.', '$$.', '$params.', '$query.', '$principal.', '$status.'), weight: 8 }, fc.constantFrom('$nope.', '$number.'))
const path = fc.tuple(start, fc.array(field, { minLength: 1, maxLength: 3 })).map(([from, names]) => from + names.join('.'))
const literal = fc.oneof(fc.constantFrom('true', 'false', 'null', '"x"', '""', '0', '1.5', '-2', '[1]'), fc.integer().map(String))
const key = fc.oneof({ arbitrary: fc.constantFrom('a', 'b', 'sku', 'qty', 'status', '1', '__proto__', ''), weight: 8 }, fc.constant('_jsonata_lambda'))

const expression: fc.Memo<string> = fc.memo((depth) => {
  const value = depth <= 1
    ? fc.oneof(path, path, literal, path.map((p) => `$number(${p})`))
    : fc.oneof({ arbitrary: fc.oneof(path, literal, path.map((p) => `$number(${p})`), expression(depth - 1)), weight: 6 }, fc.constantFrom('$', '$$', '$params', '$string(a)', 'a & b', 'a[0]', '$number()', '$number(a, b)'))
  return fc.uniqueArray(fc.tuple(key, value), { maxLength: 4, selector: ([k]) => k }).map((pairs) => `{ ${pairs.map(([k, v]) => `"${k}": ${v}`).join(', ')} }`)
})

const scalar = fc.oneof(fc.constantFrom('12', '-3.5', '1e3', '1e400', '0x1F', ' 7', 'abc', '', 'true'), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null))
const body: fc.Memo<unknown> = fc.memo((depth) => depth <= 1
  ? scalar
  : fc.oneof(scalar, fc.dictionary(field, body(depth - 1), { maxKeys: 4 }), fc.array(body(depth - 1), { maxLength: 2 })))
const object = fc.dictionary(field, body(3), { maxKeys: 5 })
const bindings = fc.record({
  params: fc.dictionary(field, scalar, { maxKeys: 3 }),
  query: fc.dictionary(field, body(2), { maxKeys: 3 }),
  principal: fc.oneof(fc.constant(null), fc.dictionary(field, scalar, { maxKeys: 2 })),
}, { requiredKeys: ['params', 'query', 'principal'] }).chain((b) => fc.oneof(fc.constant(b), fc.integer({ min: 100, max: 599 }).map((status) => ({ ...b, status }))))

/** A value as JSON with each object's kind (plain or prototype-free), so a result of another kind differs. */
function shape (value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v)
    ? { kind: Object.getPrototypeOf(v) === null ? 'bare' : 'plain', entries: Object.entries(v) }
    : v) ?? 'undefined'
}

t.test('a plain mapping gives what JSONata gives, or leaves the evaluation to JSONata', async (t) => {
  let plain = 0
  let left = 0
  await fc.assert(fc.asyncProperty(expression(3), fc.oneof(object, object, object, body(2)), bindings, async (text, input, bound) => {
    const mapping = jsonata(text)
    const evaluate = plainMapping(mapping)
    const result = evaluate === undefined ? OUTSIDE : evaluate(input, bound)
    if (result === OUTSIDE) {
      left++
      return
    }
    plain++
    const expected = await mapping.evaluate(input, bound)
    if (shape(result) !== shape(expected)) throw new Error(`${text} over ${JSON.stringify(input)}: ${shape(result)}, JSONata ${shape(expected)}`)
  }), { seed: 44, numRuns: 4000 })
  t.ok(plain > 1000 && left > 500, `${plain} evaluations plain, ${left} left to JSONata`)
})

t.test('the transform scenario\'s mappings are plain ones', async (t) => {
  const request = plainMapping(jsonata('{ "sku": $params.sku }'))
  const answer = plainMapping(jsonata('{ "sku": sku, "qty": $number(qty), "status": status }'))
  t.same([
    { ...request?.({}, { params: { sku: '000123' }, query: {}, principal: null }) as object },
    { ...answer?.({ sku: '000123', qty: '1', status: 'ok' }, { params: {}, query: {}, principal: null, status: 200 }) as object },
  ], [{ sku: '000123' }, { sku: '000123', qty: 1, status: 'ok' }])
})
