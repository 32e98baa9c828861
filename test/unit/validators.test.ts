import t from 'tap'
import { compileSchema, compileSchemaByContent } from '../../src/plugin/validators.js'

const schema = { type: 'object', properties: { n: { type: 'integer', default: 1 } } }

t.test('a schema object is compiled once per author', async (t) => {
  t.equal(compileSchema(schema, 'policy'), compileSchema(schema, 'policy'))
  t.not(compileSchema(schema, 'policy'), compileSchema(schema, 'payload'))
})

t.test('a schema rebuilt as a new object with the same content is compiled once', async (t) => {
  t.equal(compileSchemaByContent({ ...schema }, 'lanegate'), compileSchemaByContent({ ...schema }, 'lanegate'))
})

t.test('lanegate\'s and policy schemas fill defaults; a payload schema leaves the payload as sent', async (t) => {
  for (const author of ['lanegate', 'policy'] as const) {
    const data: Record<string, unknown> = {}
    t.ok(compileSchema(schema, author)(data))
    t.same(data, { n: 1 }, author)
  }
  const payload: Record<string, unknown> = {}
  t.ok(compileSchema(schema, 'payload')(payload))
  t.same(payload, {})
})

t.test('strict mode for lanegate\'s own schemas only: an unknown keyword fails there, passes elsewhere', async (t) => {
  t.throws(() => compileSchema({ type: 'object', colour: 'red' }, 'lanegate'), /unknown keyword/)
  t.doesNotThrow(() => compileSchema({ type: 'object', colour: 'red' }, 'policy'))
  t.doesNotThrow(() => compileSchema({ type: 'object', colour: 'red' }, 'payload'))
})

t.test('two schemas with the same $id do not clash (a reload brings the same operation schema again)', async (t) => {
  const first = compileSchema({ $id: 'op', type: 'string' }, 'payload')
  const second = compileSchema({ $id: 'op', type: 'integer' }, 'payload')
  t.equal(first('x'), true)
  t.equal(second('x'), false)
})

t.test('formats are known to every author', async (t) => {
  for (const author of ['lanegate', 'policy', 'payload'] as const) {
    const validate = compileSchema({ type: 'string', format: 'date' }, author)
    t.equal(validate('2026-11-25'), true, author)
    t.equal(validate('yesterday'), false, author)
  }
})

t.test('request schemas (written in gateway.yaml): strict, the first error only, no defaults; coerced for query and headers', async (t) => {
  t.throws(() => compileSchema({ type: 'object', minimun: 1 }, 'request'), /unknown keyword/)
  t.throws(() => compileSchema({ type: 'object', minimun: 1 }, 'coerced-request'), /unknown keyword/)
  const query = { type: 'object', properties: { n: { type: 'integer', default: 5 }, m: { type: 'integer' } } }
  const sent = { n: '3', m: 'x' }
  const body = compileSchema(query, 'request')
  t.equal(body({ ...sent }), false)
  t.equal(body.errors?.length, 1, 'one error: the 400 names the first')
  const coerced = compileSchema(query, 'coerced-request')
  const copy: Record<string, unknown> = { n: '3' }
  t.equal(coerced(copy), true)
  t.same(copy, { n: 3 }, 'coerced, and no default filled in')
  t.not(body, coerced)
})
