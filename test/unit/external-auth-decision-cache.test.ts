import t from 'tap'
import { DecisionCache } from '../../plugins/external-auth/decision-cache.js'

t.test('a decision is kept cache_seconds from when it was stored, then asked again; at most max are kept', async (t) => {
  const cache = new DecisionCache<string>(60_000, 2)
  cache.set('a', 'allow', 1_000)
  t.equal(cache.get('a', 1_000), 'allow')
  t.equal(cache.get('a', 60_999), 'allow', 'still within its 60 s')
  t.equal(cache.get('a', 61_000), undefined, 'expired at 60 s')
  t.equal(cache.get('a', 1_000), undefined, 'an expired decision is dropped, not kept for an earlier clock')
  cache.set('a', 'allow', 0)
  cache.set('b', 'deny', 0)
  cache.get('a', 0)
  cache.set('c', 'allow', 0)
  t.same(['a', 'b', 'c'].map((key) => cache.get(key, 0)), ['allow', undefined, 'allow'], 'the least recently used went first')
})
