import t from 'tap'
import fc from 'fast-check'
import { canonicalLanePath, lanePath, splitLiveUrl } from '../../src/services/live/lane-path.js'

t.test('safe remainders come back canonical: one decode, then re-encoded', async (t) => {
  t.equal(canonicalLanePath(''), '')
  t.equal(canonicalLanePath('items/42'), 'items/42')
  t.equal(canonicalLanePath('items/'), 'items/')
  t.equal(canonicalLanePath('%41b%63'), 'Abc')
  t.equal(canonicalLanePath('caf%C3%A9 x'), 'caf%C3%A9%20x')
  t.equal(canonicalLanePath('a:b@c'), 'a:b@c')
})

t.test('a plain segment is forwarded as the decode-and-re-encode path would forward its escaped form', async (t) => {
  // Plain segments skip decoding (the hot path); their percent-encoded twins go the long way. Both must agree for
  // every printable ASCII character, or the shortcut forwards something the long way would have escaped.
  for (let code = 0x21; code < 0x7f; code++) {
    const char = String.fromCharCode(code)
    if (char === '%' || char === '/') continue // not one segment once raw: `%` starts an escape, `/` splits
    const escaped = `a%${code.toString(16).toUpperCase().padStart(2, '0')}b`
    let slow: string | undefined
    try { slow = canonicalLanePath(escaped) } catch { slow = undefined }
    let fast: string | undefined
    try { fast = canonicalLanePath(`a${char}b`) } catch { fast = undefined }
    t.equal(fast, slow, `${JSON.stringify(char)}: raw and escaped forms agree`)
  }
})

t.test('a whole path gives what its segments give one by one (the whole-path shortcut changes no answer)', async (t) => {
  /** The path segment by segment: each one canonical on its own, an empty one refused, a trailing `/` kept. */
  function bySegments (raw: string): string {
    const segments = raw.split('/')
    const trailingSlash = segments.length > 1 && segments.at(-1) === ''
    if (trailingSlash) segments.pop()
    return segments.map((segment) => {
      if (segment === '') throw new Error('empty segment')
      return canonicalLanePath(segment)
    }).join('/') + (trailingSlash ? '/' : '')
  }
  const outcome = (f: () => string): string => { try { return f() } catch { return '(refused)' } }
  const pathText = fc.string({ unit: fc.constantFrom('a', 'Z', '0', '.', '/', '%', '2', 'e', 'F', ';', '\\', '~', ' ', ':', 'é'), maxLength: 16 })
  fc.assert(fc.property(pathText, (raw) => raw === '' || outcome(() => canonicalLanePath(raw)) === outcome(() => bySegments(raw))), { seed: 24, numRuns: 5000 })
})

t.test('every escape of the F4 corpus is a 400 bad_request', async (t) => {
  for (const raw of ['..', '.', 'a/../b', '%2e%2e', '%2E%2E%2Fb', 'a%2F..%2Fb', '..%5Cx', 'a\\b', '..;', 'a;b', '%00', 'a%0Ab', '/host', 'a//b', '%252e', '%zz', '%E0%A4%A']) {
    t.throws(() => canonicalLanePath(raw), { name: 'GatewayError', code: 'bad_request', status: 400 }, raw)
  }
})

t.test('the remainder is taken from the raw URL after the verbatim store segment', async (t) => {
  t.same(splitLiveUrl('/v1/stores/org_a/live/x/y?q=1&r', 'org_a'), { remainder: 'x/y', query: 'q=1&r' })
  t.same(splitLiveUrl('/v1/stores/org_a/live/', 'org_a'), { remainder: '', query: '' })
  t.throws(() => splitLiveUrl('/v1/stores/org%5Fa/live/x', 'org_a'))
})

t.test('the lane target stays below the lane base path', async (t) => {
  t.equal(lanePath('http://lane:9101/stores/A', 'x/y', 'q=1'), '/stores/A/x/y?q=1')
  t.equal(lanePath('http://lane:9101', '', ''), '/')
  t.equal(lanePath('https://lane/base/', 'a', ''), '/base/a')
  t.equal(lanePath('http://lane:9101', 'a', 'q=%C3%A9&r=a%20b'), '/a?q=%C3%A9&r=a%20b', 'a plain query is forwarded as it came')
  t.equal(lanePath('http://lane:9101', 'a', 'q=\u00e9 x'), '/a?q=%C3%A9%20x', 'anything else is encoded as a URL would')
})
