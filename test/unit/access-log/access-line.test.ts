import fc from 'fast-check'
import t from 'tap'
import { ACCESS_LOG_FIELDS, type AccessLogField } from '../../../src/config/access-log-schema.js'
import { accessLineWriter, orderedFields, type AccessRecord } from '../../../src/logging/access-log/access-line.js'

const NUMERIC: readonly AccessLogField[] = ['status', 'bytes_in', 'bytes_out', 'duration_ms', 'upstream_ms']

/** Any string a request could put in a line: full Unicode, lone surrogates, quotes, backslashes, control characters. */
const text = fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: fc.constantFrom('"', '\\', '\n', '\u0000', '\u001f', '\u2028', '\ud800', '\udc00', 'a', 'é', '😀') }), fc.string({ unit: 'binary', minLength: 40, maxLength: 200 }))
const number = fc.oneof(fc.integer({ min: 0, max: 2 ** 40 }), fc.double({ min: 0, max: 1e9, noNaN: true }))

const record: fc.Arbitrary<AccessRecord> = fc.record(Object.fromEntries(ACCESS_LOG_FIELDS.map((field) =>
  [field, fc.option<string | number>(NUMERIC.includes(field) ? number : text, { nil: null })])) as Record<AccessLogField, fc.Arbitrary<string | number | null>>)

/** What a line was before the compiled writer: JSON.stringify of the record's picked fields, in the documented order. */
function stringified (line: AccessRecord, fields: readonly AccessLogField[] | undefined): string {
  if (fields === undefined) return `${JSON.stringify(line)}\n`
  const picked: Partial<AccessRecord> = {}
  for (const field of fields) picked[field] = line[field]
  return `${JSON.stringify(picked)}\n`
}

t.test('the compiled line writer gives JSON.stringify\'s exact text for every record, all fields or any subset', async (t) => {
  const subset = fc.option(fc.subarray([...ACCESS_LOG_FIELDS], { minLength: 1 }), { nil: undefined })
  // fast-check throws with the smallest record it found to differ.
  t.doesNotThrow(() => fc.assert(fc.property(record, subset, (line, fields) => {
    const ordered = orderedFields(fields)
    return accessLineWriter(ordered)(line) === stringified(line, ordered)
  }), { numRuns: 2000 }))
})

t.test('a line\'s keys follow the documented order whatever order the config lists them in', async (t) => {
  const line = Object.fromEntries(ACCESS_LOG_FIELDS.map((field) => [field, NUMERIC.includes(field) ? 1 : field])) as AccessRecord
  t.equal(accessLineWriter(orderedFields(['status', 'time', 'method']))(line), '{"time":"time","method":"method","status":1}\n')
})
