import fc from 'fast-check'
import t from 'tap'
import { canonicalLanePath, livePathBelowBase, pathBelowBase, splitLiveUrl } from '../../src/services/live/lane-path.js'

/** What the live proxy sends below the lane's base path, built the long way (split, canonical form, query). */
function builtPath (rawUrl: string, sentQuery?: (query: string) => string): string {
  const { remainder, query } = splitLiveUrl(rawUrl, 'org_a')
  return pathBelowBase(canonicalLanePath(remainder), sentQuery === undefined ? query : sentQuery(query))
}

function slicedPath (rawUrl: string, sentQuery?: (query: string) => string): string {
  const { remainder, query } = splitLiveUrl(rawUrl, 'org_a')
  return livePathBelowBase(rawUrl, remainder, query, sentQuery === undefined ? query : sentQuery(query))
}

const outcome = (f: () => string): string => { try { return f() } catch { return '(refused)' } }

t.test('the path sliced from the raw URL is the one built from its parts', async (t) => {
  const urls = [
    '/v1/stores/org_a/live/api/items/000123', '/v1/stores/org_a/live/api/items/000123?fields=price&x=1', '/v1/stores/org_a/live/x/',
    '/v1/stores/org_a/live', '/v1/stores/org_a/live/', '/v1/stores/org_a/live?', '/v1/stores/org_a/live/x?', '/v1/stores/org_a/live/x??',
    '/v1/stores/org_a/live/x?q=\u00e9', '/v1/stores/org_a/live/a%20b?q=1', '/v1/stores/org_a/live/a/../b',
  ]
  t.same(urls.map((url) => outcome(() => slicedPath(url))), urls.map((url) => outcome(() => builtPath(url))))
  t.same(slicedPath('/v1/stores/org_a/live/api/items/000123?fields=price'), '/api/items/000123?fields=price')
  const dropFirst = (query: string): string => query.split('&').slice(1).join('&')
  t.same(slicedPath('/v1/stores/org_a/live/x?access_token=t&q=1', dropFirst), '/x?q=1', 'a query changed before sending is not the raw one')
  const tail = fc.string({ unit: fc.constantFrom('a', '0', '.', '/', '%', '2', 'e', ';', '?', '&', '=', ' ', '\u00e9'), maxLength: 16 })
  fc.assert(fc.property(tail, (rest) => {
    const url = `/v1/stores/org_a/live${rest}`
    return outcome(() => slicedPath(url)) === outcome(() => builtPath(url)) && outcome(() => slicedPath(url, dropFirst)) === outcome(() => builtPath(url, dropFirst))
  }), { seed: 45, numRuns: 5000 })
})
