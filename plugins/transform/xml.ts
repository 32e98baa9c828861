import { XMLBuilder, XMLParser, XMLValidator, type X2jOptions } from 'fast-xml-parser'
import { xmlEntities } from './xml-entities.js'
import { OUTSIDE, plainReaderFits, readPlainXml } from './xml-plain-reader.js'
import { plainXmlWriter } from './xml-plain-writer.js'
import type { XmlSettings } from './xml-settings.js'

/**
 * XML ↔ JSON with fast-xml-parser (maintained, no native code, a validator and a builder with the same options).
 * The mapping, in the documented subset (docs/policies.md, `transform`): an element is a key; its text is a string
 * (values are never guessed into numbers), or `#text` beside attributes, which are `@name` keys; an empty element
 * is `""`; an element repeated is an array, and one listed in `arrays` (dotted path from the root, e.g.
 * `Envelope.Body.Items.Item`) is an array even when it occurs once. Namespace prefixes are kept (`s:Body`) or
 * stripped (`namespaces: strip`, then `xmlns` attributes go too). Comments, processing instructions and the XML
 * declaration are dropped; mixed content (text between child elements) keeps its text joined in `#text`.
 *
 * Parsed safely: a document with a DTD (`<!DOCTYPE`) or an entity declaration is refused before parsing, so no
 * entity is ever expanded (billion laughs) or fetched (XXE); only the five XML entities and numeric references are
 * decoded, and nesting is bounded (100 levels).
 */

export type { XmlSettings } from './xml-settings.js'

/** Why a body is not XML the gateway accepts, or a value that cannot be written as XML. */
export class XmlError extends Error {
  constructor (readonly unsafe: boolean, message: string) {
    super(message)
  }
}

const DTD = /<!\s*(?:DOCTYPE|ENTITY)/i

export interface XmlCodec {
  parse (text: string): unknown
  build (value: unknown): string
}

export function xmlCodec (settings: XmlSettings): XmlCodec {
  const arrays = new Set(settings.arrays)
  const readWithLibrary = libraryXmlReader(settings)
  const plain = plainReaderFits(settings)
  const writeWithLibrary = libraryXmlWriter(settings)
  const writePlain = plainXmlWriter(settings)

  return {
    parse (text) {
      if (DTD.test(text)) throw new XmlError(true, 'XML with a DTD or an entity declaration: refused, never expanded')
      // Plain XML (most answers) in one pass; anything else, and every refusal, through the library.
      const read = plain ? readPlainXml(text, settings, arrays) : OUTSIDE
      return read === OUTSIDE ? readWithLibrary(text) : read
    },
    build (value) {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new XmlError(false, 'an XML body is built from an object with one key, its root element')
      const roots = Object.keys(value).filter((key) => !key.startsWith('?'))
      if (roots.length !== 1) throw new XmlError(false, `an XML body has one root element (given ${roots.length}: ${roots.slice(0, 5).join(', ')})`)
      if (Array.isArray((value as Record<string, unknown>)[roots[0] as string])) throw new XmlError(false, 'an XML body has one root element (given an array)')
      const plain = writePlain === undefined ? OUTSIDE : writePlain(value as Record<string, unknown>)
      return plain === OUTSIDE ? writeWithLibrary(value) : plain
    },
  }
}

function commonOptions (settings: XmlSettings) {
  return { ignoreAttributes: false, attributeNamePrefix: settings.attribute_prefix, textNodeName: settings.text_key }
}

/** fast-xml-parser's builder with the policy's settings: the codec's writer for what the plain writer leaves. */
export function libraryXmlWriter (settings: XmlSettings): (value: unknown) => string {
  const builder = new XMLBuilder({ ...commonOptions(settings), format: false, suppressEmptyNode: false, processEntities: true })
  return (value) => builder.build(value) as string
}

/**
 * fast-xml-parser's reading with the policy's settings: its validator, then its parser. The codec's reader for
 * whatever the plain reader leaves (xml-plain-reader.ts), and the reference that reader is tested against.
 */
export function libraryXmlReader (settings: XmlSettings): (text: string) => unknown {
  const arrays = new Set(settings.arrays)
  const options: Partial<X2jOptions> = {
    ...commonOptions(settings),
    removeNSPrefix: settings.namespaces === 'strip',
    parseTagValue: false,
    parseAttributeValue: false,
    trimValues: true,
    ignoreDeclaration: true,
    ignorePiTags: true,
    processEntities: true,
    entityDecoder: xmlEntities,
    // Asked for every element: without `arrays` there is nothing to look up, and no element's path is made as text.
    ...(arrays.size === 0 ? { jPath: false } : { isArray: (_name: string, path: unknown, _leaf: boolean, attribute: boolean) => !attribute && arrays.has(String(path)) }),
  }
  const parser = new XMLParser(options)
  return function readWithLibrary (text) {
    const valid = XMLValidator.validate(text)
    if (valid !== true) throw new XmlError(false, `not well-formed XML: ${valid.err.msg} (line ${valid.err.line})`)
    try {
      return parser.parse(text)
    } catch (error) {
      throw new XmlError(false, `not XML the gateway accepts: ${(error as Error).message}`)
    }
  }
}
