import t from 'tap'
import { randomUUID } from 'node:crypto'
import { RequestIds } from '../../src/logging/request-id.js'

/** A version 4 UUID as RFC 9562 writes it: version nibble 4, variant bits 10. */
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

t.test('the shape is the one randomUUID gives, which it replaces', async (t) => {
  // The pattern itself is checked on the library's own ids, so it cannot drift from what callers saw before.
  for (let i = 0; i < 1000; i++) t.match(randomUUID(), UUID_V4)
  const ids = new RequestIds()
  let misshapen = 0
  for (let i = 0; i < 10_000; i++) if (!UUID_V4.test(ids.next())) misshapen++
  t.equal(misshapen, 0)
})

t.test('no id repeats across several blocks, and each block has a prefix of its own', async (t) => {
  const ids = new RequestIds()
  const seen = new Set<string>()
  const prefixes = new Set<string>()
  const count = 1024 * 3 + 17
  for (let i = 0; i < count; i++) {
    const id = ids.next()
    seen.add(id)
    prefixes.add(id.slice(0, 33))
  }
  t.equal(seen.size, count)
  t.equal(prefixes.size, 4, 'three whole blocks and the start of a fourth')
})

t.test('the counter runs through a block in order, from 000 to 3ff', async (t) => {
  const ids = new RequestIds()
  const block = Array.from({ length: 1024 }, () => ids.next())
  t.equal(block[0]?.slice(33), '000')
  t.equal(block[1]?.slice(33), '001')
  t.equal(block[1023]?.slice(33), '3ff')
  t.equal(new Set(block.map((id) => id.slice(0, 33))).size, 1)
  t.not(ids.next().slice(0, 33), block[0]?.slice(0, 33), 'the next id starts a new block')
})

t.test('two generators (two processes, two workers) do not share ids', async (t) => {
  const a = new RequestIds()
  const b = new RequestIds()
  const fromA = new Set(Array.from({ length: 5000 }, () => a.next()))
  const shared = Array.from({ length: 5000 }, () => b.next()).filter((id) => fromA.has(id))
  t.same(shared, [])
})
