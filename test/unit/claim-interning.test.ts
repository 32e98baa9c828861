import t from 'tap'
import fc from 'fast-check'
import { internScopes, internString } from '../../src/node-tuning/claim-interning.js'

t.test('an interned value is the value, unit for unit, lone surrogates included', async (t) => {
  // Kept as a flat copy (a slice of a claim compared slowly): the copy must never change what it holds.
  fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 80 }), (text) => {
    const sliced = `x${text}y`.slice(1, -1)
    return internString(sliced) === text && internString(text) === text
  }), { seed: 7, numRuns: 2000 })
})

t.test('the scopes of a claim are its space-separated parts, in a set shared by every token with that claim', async (t) => {
  const claim = 'engage:content.view engage:circulars.view  engage:content.view'
  const scopes = internScopes(claim)
  t.same([...scopes], ['engage:content.view', 'engage:circulars.view'])
  t.equal(internScopes(`${claim} `.slice(0, -1)), scopes, 'the same claim text shares the set')
  t.ok(scopes.has('engage:content.view') && !scopes.has('engage:content'))
})
