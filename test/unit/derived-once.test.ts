import t from 'tap'
import { derivedOnce } from '../../src/runtime/derived-once.js'

t.test('a value is derived once per key, whichever key was asked about last', async (t) => {
  const derivations: string[] = []
  const lengthOf = derivedOnce((key: { name: string }) => { derivations.push(key.name); return key.name.length })
  const a = { name: 'aa' }
  const b = { name: 'bbb' }
  t.same([lengthOf(a), lengthOf(a), lengthOf(b), lengthOf(a), lengthOf(b), lengthOf(b)], [2, 2, 3, 2, 3, 3])
  t.same(derivations, ['aa', 'bbb'], 'each key derived once, back and forth')
  t.equal(lengthOf({ name: 'aa' }), 2)
  t.same(derivations, ['aa', 'bbb', 'aa'], 'an equal but other key is another key')
})

t.test('a derived value that is falsy (0) is kept too', async (t) => {
  let calls = 0
  const zeroOf = derivedOnce((_key: object) => { calls++; return 0 })
  const key = {}
  zeroOf(key)
  zeroOf({})
  zeroOf(key)
  t.equal(calls, 2)
})
