import t from 'tap'
import fc from 'fast-check'
import { XMLValidator } from 'fast-xml-parser'
import { libraryXmlReader, type XmlSettings } from '../../plugins/transform/xml.js'
import { OUTSIDE, plainReaderFits, readPlainXml } from '../../plugins/transform/xml-plain-reader.js'

/**
 * The plain reader against the library it stands in for (fast-xml-parser's validator and parser, with the same
 * settings): on plain XML it must give the library's JSON, keys in the library's order; on anything else it must
 * either give exactly that too (and the validator must accept the document) or leave it to the library.
 */
interface Node { name: string, attributes: Array<[string, string]>, content: string | Array<{ name: string, node: Node }>, selfClosing: boolean }

const local = fc.stringMatching(/^[a-z][a-z0-9_.-]{0,4}$/).map((n) => `e${n}`)
const name = fc.tuple(fc.option(fc.constantFrom('s', 'm', 'soap'), { nil: undefined }), local).map(([prefix, n]) => prefix === undefined ? n : `${prefix}:${n}`)
const space = fc.constantFrom('', ' ', '\n', '\t', '  \n ')
const reference = fc.constantFrom('&lt;', '&gt;', '&amp;', '&quot;', '&apos;', '&#65;', '&#x20AC;', '&#32;', '&#10;', '&#x1F600;', '&#0;', '&#12345678;')
const plainChar = fc.oneof(fc.constantFrom('>', '"', '\'', ' ', '\t', '\n', 'é', '€', '😀', ']]>', '\u00a0', '='), fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }).filter((c) => !'<&\r'.includes(c) && c >= ' '))
const text = fc.array(fc.oneof(plainChar, plainChar, reference), { maxLength: 10 }).map((parts) => parts.join(''))
const attributes = fc.uniqueArray(fc.tuple(fc.oneof(name, local.map((n) => `xmlns:${n}`), fc.constant('xmlns')), text.map((v) => v.replace(/"/g, '&quot;'))), {
  selector: ([n]) => n.slice(n.indexOf(':') + 1),
  maxLength: 3,
})

const node: fc.Memo<Node> = fc.memo((depth) => fc.record({
  name,
  attributes,
  content: depth <= 1
    ? text
    : fc.oneof(text, fc.array(fc.record({ name: fc.constantFrom('ea', 'eb', 's:ea', 'ec.d'), node: node(depth - 1) }), { minLength: 1, maxLength: 4 })),
  selfClosing: fc.boolean(),
}))

const document = fc.record({ root: node(4), declaration: fc.constantFrom('', '<?xml version="1.0" encoding="UTF-8"?>', '<?xml version=\'1.0\'?>\n'), gaps: fc.array(space, { minLength: 8, maxLength: 8 }) })

function toXml (n: Node, gaps: readonly string[], depth = 0, as = n.name): string {
  const gap = gaps[depth % gaps.length] as string
  const attrs = n.attributes.map(([a, v]) => ` ${a}="${v}"`).join('') + (depth % 3 === 1 ? gap.replace('\t', ' ') : '')
  if (n.selfClosing && n.content === '') return `<${as}${attrs}/>`
  const inner = typeof n.content === 'string' ? n.content : n.content.map((c) => gap + toXml(c.node, gaps, depth + 1, c.name)).join('') + gap
  return `<${as}${attrs}>${inner}</${as}>`
}

/** Element paths of a document as the library names them (for `arrays`). */
function pathsOf (n: Node, strip: boolean, prefix = '', as = n.name): string[] {
  const key = strip ? as.slice(as.indexOf(':') + 1) : as
  const path = prefix === '' ? key : `${prefix}.${key}`
  return typeof n.content === 'string' ? [path] : [path, ...n.content.flatMap((c) => pathsOf(c.node, strip, path, c.name))]
}

const settingsFor = (strip: boolean, prefix: string, textKey: string, arrays: string[]): XmlSettings => ({ attribute_prefix: prefix, text_key: textKey, arrays, namespaces: strip ? 'strip' : 'keep' })
const settings = fc.record({ strip: fc.boolean(), prefix: fc.constantFrom('@', '$', '@_'), textKey: fc.constantFrom('#text', '#', '$t') })

/** The library's reading, or its refusal's message. */
function library (xml: string, s: XmlSettings): string {
  try {
    return JSON.stringify(libraryXmlReader(s)(xml))
  } catch (error) {
    return `refused: ${(error as Error).message}`
  }
}

t.test('plain XML is read as the library reads it, keys in its order', async (t) => {
  let read = 0
  fc.assert(fc.property(document, settings, fc.nat(), ({ root, declaration, gaps }, { strip, prefix, textKey }, pick) => {
    const xml = declaration + toXml(root, gaps)
    const paths = pathsOf(root, strip)
    const s = settingsFor(strip, prefix, textKey, pick % 3 === 0 ? [] : [paths[pick % paths.length] as string])
    if (!plainReaderFits(s)) return
    const plain = readPlainXml(xml, s, new Set(s.arrays))
    if (plain === OUTSIDE) {
      // Left to the library only where the library itself would not read the same: attributes sharing a local name.
      if (strip) return
      throw new Error(`left plain XML to the library: ${xml}`)
    }
    read++
    const expected = library(xml, s)
    if (JSON.stringify(plain) !== expected) throw new Error(`read ${xml}\nas  ${JSON.stringify(plain)}\nlib ${expected}`)
  }), { seed: 44, numRuns: 3000 })
  t.ok(read > 2000, `${read} of 3000 generated documents read by the plain reader`)
})

const damage = fc.constantFrom('<', '>', '&', '"', '\'', '/', '=', ' ', '\r', '\u0000', '<!-- c -->', '<![CDATA[x]]>', '<?pi x?>', '&foo;', '&#;', '&#x110000;', '&#123456789;',
  'constructor', '__proto__', 'toString', 'prototype', ':', 'a:b:c', '\ufeff', '<!DOCTYPE a>', '</ea>', '<ea>', '<ea/>', 'x="1"', ' x=1', 'xmlns:s="u"', '1')

t.test('damaged XML is read as the library reads it, or left to the library', async (t) => {
  let read = 0
  let left = 0
  fc.assert(fc.property(document, settings, fc.array(fc.tuple(fc.nat(), fc.nat({ max: 3 }), damage), { minLength: 1, maxLength: 3 }), ({ root, declaration, gaps }, { strip, prefix, textKey }, cuts) => {
    let xml = declaration + toXml(root, gaps)
    for (const [at, remove, insert] of cuts) {
      const i = at % (xml.length + 1)
      xml = xml.slice(0, i) + insert + xml.slice(i + remove)
    }
    const s = settingsFor(strip, prefix, textKey, [])
    const plain = readPlainXml(xml, s, new Set())
    if (plain === OUTSIDE) {
      left++
      return
    }
    read++
    if (XMLValidator.validate(xml) !== true) throw new Error(`read XML the validator refuses: ${xml}`)
    const expected = library(xml, s)
    if (JSON.stringify(plain) !== expected) throw new Error(`read ${xml}\nas  ${JSON.stringify(plain)}\nlib ${expected}`)
  }), { seed: 44, numRuns: 5000 })
  t.ok(read > 200 && left > 2000, `${read} damaged documents read, ${left} left to the library`)
})

t.test('settings whose keys could meet element names leave every document to the library', async (t) => {
  t.same([
    plainReaderFits(settingsFor(false, '', '#text', [])),
    plainReaderFits(settingsFor(false, '_', '#text', [])),
    plainReaderFits(settingsFor(false, '@', 'text', [])),
    plainReaderFits(settingsFor(false, '@', '@text', [])),
    plainReaderFits(settingsFor(false, '@', '#text', [])),
  ], [false, false, false, false, true])
})
