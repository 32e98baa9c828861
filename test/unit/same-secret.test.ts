import t from 'tap'
import fc from 'fast-check'
import { timingSafeEqual } from 'node:crypto'
import { RememberedSecret } from '../../src/secrets/same-secret.js'
import { wordsDiffer } from '../../src/secrets/words-differ.js'

/** The comparison as a slot makes it: the remembered side encoded when remembered, the presented one per call. */
function sameSecret (remembered: string, presented: string): boolean {
  return new RememberedSecret(remembered).matches(presented)
}

/** What sameSecret replaced (and must agree with): both sides' UTF-8 bytes through node's timingSafeEqual. */
function reference (remembered: string, presented: string): boolean {
  if (remembered.length !== presented.length) return false
  const a = Buffer.from(remembered)
  const b = Buffer.from(presented)
  return a.length === b.length && timingSafeEqual(a, b)
}

// UTF-16 units of every kind: ASCII, latin1, BMP, astral pairs and lone surrogates (which UTF-8 encodes as U+FFFD).
const anyText = fc.string({ unit: 'binary', maxLength: 300 })

t.test('agrees with timingSafeEqual over UTF-8 on arbitrary pairs of the same length', async (t) => {
  fc.assert(fc.property(anyText, fc.nat(), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }), (text, at, replacement) => {
    // The same text with one unit replaced: equal or not, the lengths match, so the whole compare runs.
    const i = text.length === 0 ? 0 : at % text.length
    const other = text.slice(0, i) + replacement + text.slice(i + 1)
    const presented = other.slice(0, text.length).padEnd(text.length, 'x')
    return sameSecret(text, presented) === reference(text, presented) && sameSecret(text, text.slice()) === true
  }), { seed: 24, numRuns: 2000 })
})

t.test('agrees with timingSafeEqual on unrelated pairs, equal lengths or not', async (t) => {
  fc.assert(fc.property(anyText, anyText, (a, b) => sameSecret(a, b) === reference(a, b)), { seed: 25, numRuns: 2000 })
})

t.test('a token as the auth step hands it over: a slice of the Authorization header', async (t) => {
  const header = `Bearer ${'eyJhbGciOiJFZERTQSJ9.'.repeat(30)}sig`
  const token = header.slice(7)
  t.equal(sameSecret(token, header.slice(7)), true)
  t.equal(sameSecret(token, `${token.slice(0, -1)}h`), false, 'the last character differs')
  t.equal(sameSecret(token, `f${token.slice(1)}`), false, 'the first character differs')
  t.equal(sameSecret(token, token.slice(0, -1)), false, 'shorter by one')
})

t.test('texts of the same length whose UTF-8 lengths differ are different', async (t) => {
  t.equal(sameSecret('aé', 'ab'), false)
  t.equal(sameSecret('\u00e9', '\ud83d'), false, 'two bytes against a lone surrogate (three)')
})

t.test('one remembered secret against many presented ones, as a kept-alive connection sends them', async (t) => {
  const remembered = new RememberedSecret('tok-0123456789')
  t.equal(remembered.matches('tok-0123456789'), true)
  t.equal(remembered.matches('tok-0123456780'), false)
  t.equal(remembered.matches('tok-01234567890'), false, 'longer')
  t.equal(remembered.matches('tok-0123456789'), true, 'still equal after a miss')
})

t.test('secrets of the same length in characters but not in UTF-8 bytes are different, either way round', async (t) => {
  // 'ab' + U+00E9 is 4 bytes, one word; 'ab' + U+0800 is 5, so its last byte lies past the remembered words.
  t.equal(sameSecret('abé', 'ab\u0800'), false)
  t.equal(sameSecret('ab\u0800', 'abé'), false)
})

t.test('bytes left in the scratch by an earlier, longer pair never make a shorter pair equal', async (t) => {
  t.equal(sameSecret('abcdefgh', 'abcdefgh'), true)
  // Lengths 5: the scratch's last word of each side holds 'e' and three bytes of whatever came before.
  t.equal(sameSecret('abcdX', 'abcdY'), false)
  t.equal(sameSecret('abcde', 'abcde'), true)
  t.equal(sameSecret('', ''), true)
})

t.test('a secret remembered before other calls still matches: its padding is zero, not what the scratch held', async (t) => {
  t.equal(sameSecret('qqqqqqqq', 'qqqqqqqq'), true)
  // Five bytes: its last word is 'e' and three bytes of padding, taken while the scratch still held 'qqq' there.
  const five = new RememberedSecret('abcde')
  t.equal(sameSecret('zzzzzzzzzzzz', 'zzzzzzzzzzzz'), true, 'another connection\'s secrets in between')
  t.equal(five.matches('abcde'), true)
  t.equal(five.matches('abcdf'), false)
})

t.test('a pair longer than the scratch grows it and still compares', async (t) => {
  // The scratch starts at 64 KiB, half for each side, and a side reserves 3 bytes per character: 30,000 outgrow it.
  const before = new RememberedSecret('remembered before the growth')
  const long = 'k'.repeat(30_000)
  t.equal(sameSecret(long, 'k'.repeat(30_000)), true)
  t.equal(sameSecret(long, `${'k'.repeat(29_999)}j`), false)
  t.equal(sameSecret(long, `j${'k'.repeat(29_999)}`), false)
  t.equal(sameSecret('short', 'short'), true, 'and shorter pairs after it')
  t.equal(before.matches('remembered before the growth'), true, 'a secret remembered before the growth')
  t.equal(before.matches('remembered before the growtH'), false)
})

t.test('the WebAssembly comparison: every differing byte of a range counts, and nothing outside it', async (t) => {
  const bytes = wordsDiffer.bytes()
  fc.assert(fc.property(fc.integer({ min: 1, max: 64 }), fc.nat(), fc.integer({ min: 1, max: 255 }), (words, at, flip) => {
    const length = words * 8
    const offset = 1024
    for (let i = 0; i < length; i++) bytes[offset + i] = bytes[i] = (i * 37) & 0xff
    bytes[length] = 1 // just past the range on one side only: not compared
    if (wordsDiffer.differ(length, offset) !== 0) return false
    bytes[offset + (at % length)] ^= flip
    return wordsDiffer.differ(length, offset) === 1
  }), { seed: 26, numRuns: 500 })
})
