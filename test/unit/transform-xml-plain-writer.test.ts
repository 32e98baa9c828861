import t from 'tap'
import fc from 'fast-check'
import { libraryXmlWriter, type XmlSettings } from '../../plugins/transform/xml.js'
import { OUTSIDE } from '../../plugins/transform/xml-plain-reader.js'
import { plainXmlWriter } from '../../plugins/transform/xml-plain-writer.js'

/**
 * The plain writer against the library's builder with the same settings: on plain JSON it must write the library's
 * text; on anything else it must write exactly that too or leave the value to the library.
 */
const settings: XmlSettings = { attribute_prefix: '@', text_key: '#text', arrays: [], namespaces: 'keep' }
const write = plainXmlWriter(settings)
const library = libraryXmlWriter(settings)

const plainName = fc.oneof(fc.stringMatching(/^[a-z][a-z0-9_.-]{0,4}$/), fc.constantFrom('soap:Body', 'op:GetItem', 'x_1', 'Upper'))
const name = fc.oneof(plainName, fc.constantFrom('2', 'a:b:c', '-a'))
const text = fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('&', '<a>', '"q"', '\'', 'true', '', ' ', '€😀', ']]>'))
const number = fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(-0, 1e21, 0.1))

const plain: fc.Memo<unknown> = fc.memo((depth) => depth <= 1
  ? fc.oneof(text, number)
  : fc.oneof(text, number, fc.tuple(fc.dictionary(plainName, plain(depth - 1), { maxKeys: 4 }), fc.dictionary(plainName.map((n) => `@${n}`), text.filter((v) => v !== 'true'), { maxKeys: 2 }), fc.boolean())
    .map(([elements, attributes, bare]) => Object.assign(bare ? Object.create(null) : {}, attributes, elements))))

const odd = fc.constantFrom<unknown>(true, false, null, undefined, [], ['a', 'b'], [{ x: '1' }], Number.NaN, Number.POSITIVE_INFINITY, new Date(0), { '#text': 'x' }, { '#text': 'x', '@a': '1' }, { '@a': 'true' }, { '@a': 1 }, { '@a': { b: '1' } }, { '?pi': '' }, { 'a b': '1' }, { '': '1' })
const anything: fc.Memo<unknown> = fc.memo((depth) => depth <= 1
  ? fc.oneof(text, number, odd)
  : fc.oneof(text, number, odd, fc.dictionary(fc.oneof(name, name.map((n) => `@${n}`), fc.constantFrom('#text', '@', '?xml')), anything(depth - 1), { maxKeys: 4 })))

t.test('plain JSON is written as the library writes it', async (t) => {
  fc.assert(fc.property(plainName, plain(4), (root, value) => {
    const document = { [root]: value }
    const written = write?.(document)
    if (written === OUTSIDE || written === undefined) throw new Error(`left plain JSON to the library: ${JSON.stringify(document)}`)
    const expected = library(document)
    if (written !== expected) throw new Error(`wrote ${JSON.stringify(document)}\nas  ${written}\nlib ${expected}`)
  }), { seed: 44, numRuns: 3000 })
  t.pass('3000 generated values written as the library writes them')
})

t.test('other JSON is written as the library writes it, or left to the library', async (t) => {
  let plainCount = 0
  let left = 0
  fc.assert(fc.property(fc.dictionary(fc.oneof(name, fc.constantFrom('@a', '?xml')), anything(4), { minKeys: 1, maxKeys: 2 }), (document) => {
    const written = write?.(document as Record<string, unknown>)
    if (written === OUTSIDE || written === undefined) {
      left++
      return
    }
    plainCount++
    let expected: string
    try {
      expected = library(document)
    } catch (error) {
      throw new Error(`wrote ${JSON.stringify(document)} the library refuses: ${(error as Error).message}`)
    }
    if (written !== expected) throw new Error(`wrote ${JSON.stringify(document)}\nas  ${written}\nlib ${expected}`)
  }), { seed: 44, numRuns: 4000 })
  t.ok(plainCount > 200 && left > 2000, `${plainCount} written plainly, ${left} left to the library`)
})

t.test('settings whose keys could be taken for element names have no plain writer', async (t) => {
  t.equal(plainXmlWriter({ ...settings, attribute_prefix: '' }), undefined)
})
