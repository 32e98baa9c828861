import t from 'tap'
import fc from 'fast-check'
import { xmlCodec } from '../../plugins/transform/xml.js'

/**
 * XML -> JSON -> XML in the documented subset (docs/policies.md, `transform`): elements with attributes and either
 * trimmed text or child elements (no mixed content), a repeated child's occurrences next to each other. Each
 * generated tree is written as XML by the test's own serializer; the codec must read it as the documented JSON,
 * and write that JSON back as XML that reads the same again.
 */
interface Tree { name: string, attributes: Array<[string, string]>, content: string | Array<{ name: string, items: Tree[] }> }

const codec = xmlCodec({ attribute_prefix: '@', text_key: '#text', arrays: [], namespaces: 'keep' })

const name = fc.stringMatching(/^[a-z][a-z0-9_-]{0,5}$/).map((n) => `e${n}`)
// Printable text with XML's special characters, no control characters; trimmed and non-empty.
const char = fc.oneof(fc.constantFrom('<', '>', '&', '"', '\'', ' ', 'é', '€', '😀', ']]>'), fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }))
const text = fc.array(char, { minLength: 1, maxLength: 12 }).map((parts) => parts.join('').trim()).filter((s) => s !== '' && !/[\u0000-\u001f]/.test(s))
const attributes = fc.uniqueArray(fc.tuple(name, text), { selector: ([n]) => n, maxLength: 3 })

const tree: fc.Memo<Tree> = fc.memo((depth) => fc.record({
  name,
  attributes,
  content: depth <= 1
    ? fc.oneof(text, fc.constant(''))
    : fc.oneof(text, fc.constant(''), fc.uniqueArray(fc.record({ name, items: fc.array(tree(depth - 1), { minLength: 1, maxLength: 3 }) }), { selector: (g) => g.name, minLength: 1, maxLength: 3 })),
}))

const escapeText = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
const escapeAttribute = (s: string) => escapeText(s).replace(/"/g, '&quot;')

function toXml (node: Tree, name = node.name): string {
  const attrs = node.attributes.map(([n, v]) => ` ${n}="${escapeAttribute(v)}"`).join('')
  const inner = typeof node.content === 'string'
    ? escapeText(node.content)
    : node.content.map((group) => group.items.map((item) => toXml(item, group.name)).join('')).join('')
  return `<${name}${attrs}>${inner}</${name}>`
}

/** The documented JSON of an element. */
function toJson (node: Tree): unknown {
  const attrs = Object.fromEntries(node.attributes.map(([n, v]) => [`@${n}`, v]))
  if (typeof node.content === 'string') {
    if (node.attributes.length === 0) return node.content
    return node.content === '' ? attrs : { '#text': node.content, ...attrs }
  }
  const out: Record<string, unknown> = {}
  for (const group of node.content) out[group.name] = group.items.length === 1 ? toJson(group.items[0]!) : group.items.map(toJson)
  return { ...out, ...attrs }
}

t.test('XML -> JSON gives the documented JSON, and JSON -> XML -> JSON gives it back', async (t) => {
  fc.assert(fc.property(tree(4), (root) => {
    const xml = toXml(root)
    const json = codec.parse(xml)
    const expected = { [root.name]: toJson(root) }
    if (!isDeepStrictEqual(json, expected)) throw new Error(`read ${xml} as ${JSON.stringify(json)}, expected ${JSON.stringify(expected)}`)
    const again = codec.parse(codec.build(json))
    if (!isDeepStrictEqual(again, expected)) throw new Error(`wrote ${JSON.stringify(json)} as ${codec.build(json)}, read back ${JSON.stringify(again)}`)
  }), { seed: 44, numRuns: 2000 })
  t.pass('2000 generated documents round-tripped')
})

t.test('no generated text makes the reader throw anything but its own refusal', async (t) => {
  const xmlish = fc.array(fc.oneof(fc.constantFrom('<a>', '</a>', '<b x="1">', '</b>', '<!DOCTYPE a>', '<!ENTITY e "x">', '&e;', '&amp;', '&#0;', '&#x110000;', '<![CDATA[', ']]>', '<?xml version="1.0"?>', '<!--', '-->', '"', '<', '>'), fc.string({ maxLength: 4 })), { maxLength: 30 }).map((parts) => parts.join(''))
  fc.assert(fc.property(fc.oneof(xmlish, fc.string()), (input) => {
    try {
      codec.parse(input)
    } catch (error) {
      if ((error as Error).constructor.name !== 'XmlError') throw error
    }
  }), { seed: 44, numRuns: 3000 })
  t.pass('3000 inputs read or refused')
})

function isDeepStrictEqual (a: unknown, b: unknown): boolean {
  return JSON.stringify(sortKeys(a)) === JSON.stringify(sortKeys(b))
}

function sortKeys (value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys)
  if (typeof value !== 'object' || value === null) return value
  return Object.fromEntries(Object.keys(value).sort().map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]))
}
