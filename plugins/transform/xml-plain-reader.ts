import type { XmlSettings } from './xml-settings.js'
import { xmlEntities } from './xml-entities.js'

/**
 * A reader for plain XML: the shape most SOAP answers and XML APIs have, read in one pass without fast-xml-parser's
 * separate validation pass and node tree. It gives exactly what the library (xml.ts: validator, then parser, with
 * the policy's settings) gives, or `OUTSIDE` for anything it does not cover, and the library reads that instead:
 * so every refusal and its message stay the library's. test/unit/transform-xml-plain-reader.test.ts compares the
 * two on generated documents.
 *
 * Plain XML here: an optional XML declaration first; one root element; elements whose names are ASCII
 * (`[A-Za-z_][A-Za-z0-9_.-]*`, at most one `prefix:`) and none an Object.prototype name; attributes written
 * `name="value"` or `name='value'`, each once; an element holds either text or child elements (whitespace between
 * them aside); references only the five XML entities and numeric ones of at most 8 digits; no carriage return,
 * control character, comment, CDATA, processing instruction, DTD or byte-order mark; nesting under 64 levels.
 */

/** What `readPlainXml` gives for a document outside plain XML: the library reads it. */
export const OUTSIDE: unique symbol = Symbol('outside plain XML')

const MAX_DEPTH = 64
const DECLARATION = /^<\?xml(?:[ \t\n]+[A-Za-z]+=(?:"[^"<>?&]*"|'[^'<>?&]*'))*[ \t\n]*\?>/
const REFERENCE = /^&(?:lt|gt|amp|quot|apos|#[0-9]{1,8}|#x[0-9a-fA-F]{1,8});/

type Element = Record<string, unknown>

/**
 * Whether these settings keep the reader's keys apart from element names: an attribute prefix and a text key that
 * no element name can start with, and a text key that no attribute key can equal.
 */
export function plainReaderFits (settings: XmlSettings): boolean {
  const nameStart = /^[A-Za-z_:]/
  return settings.attribute_prefix !== '' && !nameStart.test(settings.attribute_prefix) &&
    !nameStart.test(settings.text_key) && !settings.text_key.startsWith(settings.attribute_prefix)
}

/** Reads `text` as the library would with `settings`, or answers OUTSIDE. */
export function readPlainXml (text: string, settings: XmlSettings, arrays: ReadonlySet<string>): Element | typeof OUTSIDE {
  const reader = new PlainReader(text, settings, arrays)
  try {
    return reader.document()
  } catch (error) {
    if (error === OUTSIDE) return OUTSIDE
    throw error
  }
}

class PlainReader {
  private at = 0
  private readonly strip: boolean

  constructor (private readonly text: string, private readonly settings: XmlSettings, private readonly arrays: ReadonlySet<string>) {
    this.strip = settings.namespaces === 'strip'
  }

  document (): Element {
    const text = this.text
    if (text.startsWith('<?')) {
      const declaration = DECLARATION.exec(text)
      if (declaration === null) throw OUTSIDE
      this.at = declaration[0].length
    }
    this.skipSpace()
    if (text.charCodeAt(this.at) !== LT) throw OUTSIDE
    const root: Element = {}
    this.element(root, '', 0)
    this.skipSpace()
    if (this.at !== text.length) throw OUTSIDE
    return root
  }

  /** Reads the element at `<` and adds it to `parent` under its key, as the library's compress step does. */
  private element (parent: Element, parentPath: string, depth: number): void {
    if (depth >= MAX_DEPTH) throw OUTSIDE
    const text = this.text
    this.at++
    const raw = this.name()
    const key = this.strip ? localName(raw) : raw
    // The dotted path is asked for `arrays` only: no string is made for it otherwise.
    const path = this.arrays.size === 0 ? '' : parentPath === '' ? key : `${parentPath}.${key}`
    const attributes = this.attributes()
    let value: unknown
    if (text.charCodeAt(this.at) === SLASH) {
      if (text.charCodeAt(this.at + 1) !== GT) throw OUTSIDE
      this.at += 2
      value = attributes ?? ''
    } else {
      this.at++
      value = this.content(raw, path, attributes, depth)
    }
    if (Object.hasOwn(parent, key)) {
      const earlier = parent[key]
      if (Array.isArray(earlier)) earlier.push(value)
      else parent[key] = [earlier, value]
    } else {
      parent[key] = this.arrays.size !== 0 && this.arrays.has(path) ? [value] : value
    }
  }

  /** After the start tag's `>`: text or child elements, then the end tag of `raw`. */
  private content (raw: string, path: string, attributes: Element | undefined, depth: number): unknown {
    const text = this.text
    let children: Element | undefined
    let textStart = this.at
    let textEnd = this.at
    let hasText = false
    for (;;) {
      const lt = text.indexOf('<', this.at)
      if (lt === -1) throw OUTSIDE
      if (this.checkText(this.at, lt)) hasText = true
      textStart = this.at
      textEnd = lt
      this.at = lt
      const next = text.charCodeAt(lt + 1)
      if (next === SLASH) break
      if (next === BANG || next === QUESTION) throw OUTSIDE
      children ??= {}
      this.element(children, path, depth + 1)
    }
    // The end tag, exactly as the start tag was written.
    if (!text.startsWith(raw, this.at + 2) || text.charCodeAt(this.at + 2 + raw.length) !== GT) throw OUTSIDE
    this.at += raw.length + 3
    if (children !== undefined) {
      // Text beside child elements (mixed content) is the library's to join.
      if (hasText) throw OUTSIDE
      return attributes === undefined ? children : Object.assign(children, attributes)
    }
    const trimmed = text.slice(textStart, textEnd).trim()
    const value = trimmed === '' ? undefined : decode(trimmed)
    if (attributes === undefined) return value ?? ''
    if (value === undefined) return attributes
    return { [this.settings.text_key]: value, ...attributes }
  }

  /** Whether text[from, to) holds more than whitespace; refuses characters and references outside plain XML. */
  private checkText (from: number, to: number): boolean {
    const text = this.text
    let printed = false
    for (let i = from; i < to; i++) {
      const code = text.charCodeAt(i)
      if (code === AMP) {
        const reference = REFERENCE.exec(text.slice(i, i + 12))
        if (reference === null) throw OUTSIDE
        printed = true
        i += reference[0].length - 1
      } else if (code < 0x20) {
        if (code !== NL && code !== TAB) throw OUTSIDE
      } else if (code !== SPACE) {
        printed = true
      }
    }
    return printed
  }

  /** The attributes up to `>` or `/>` (left at that character), keyed as the library keys them; undefined if none. */
  private attributes (): Element | undefined {
    const text = this.text
    let attributes: Element | undefined
    let seen: string[] | undefined
    for (;;) {
      const before = this.at
      this.skipSpace()
      const code = text.charCodeAt(this.at)
      if (code === GT || code === SLASH) return attributes
      if (this.at === before) throw OUTSIDE
      const raw = this.name()
      if (text.charCodeAt(this.at) !== EQUALS) throw OUTSIDE
      const quote = text.charCodeAt(this.at + 1)
      if (quote !== QUOTE && quote !== APOSTROPHE) throw OUTSIDE
      const start = this.at + 2
      const end = text.indexOf(quote === QUOTE ? '"' : '\'', start)
      if (end === -1) throw OUTSIDE
      const rawValue = text.slice(start, end)
      if (rawValue.includes('<')) throw OUTSIDE
      this.checkText(start, end)
      this.at = end + 1
      seen ??= []
      if (seen.includes(raw)) throw OUTSIDE
      seen.push(raw)
      if (this.strip && (raw === 'xmlns' || raw.startsWith('xmlns:'))) continue
      const key = this.settings.attribute_prefix + (this.strip ? localName(raw) : raw)
      attributes ??= {}
      // Two prefixes of one local name: which one the library keeps is its business.
      if (Object.hasOwn(attributes, key)) throw OUTSIDE
      attributes[key] = decode(rawValue.trim())
    }
  }

  /** A name at the cursor: ASCII, at most one prefix, never an Object.prototype name. */
  private name (): string {
    const text = this.text
    const start = this.at
    let colon = -1
    let i = start
    for (; i < text.length; i++) {
      const code = text.charCodeAt(i)
      const first = i === start || i === colon + 1
      if (isLetter(code) || code === UNDERSCORE) continue
      if (!first && (isDigit(code) || code === DOT || code === DASH)) continue
      if (code === COLON && colon === -1 && !first) {
        colon = i
        continue
      }
      break
    }
    if (i === start || i === colon + 1) throw OUTSIDE
    const name = text.slice(start, i)
    if (unsafeName(name) || (colon !== -1 && unsafeName(name.slice(colon - start + 1)))) throw OUTSIDE
    this.at = i
    return name
  }

  private skipSpace (): void {
    const text = this.text
    let code = text.charCodeAt(this.at)
    while (code === SPACE || code === NL || code === TAB) code = text.charCodeAt(++this.at)
  }
}

function localName (raw: string): string {
  const colon = raw.indexOf(':')
  return colon === -1 ? raw : raw.slice(colon + 1)
}

/** Names the library renames or refuses, and any other name a plain object already answers to. */
const UNSAFE_NAMES = new Set([...Object.getOwnPropertyNames(Object.prototype), 'prototype'])
/** Their first characters: most names are cleared by one, without hashing the name. */
const UNSAFE_FIRST = new Set([...UNSAFE_NAMES].map((name) => name.charCodeAt(0)))

function unsafeName (name: string): boolean {
  return UNSAFE_FIRST.has(name.charCodeAt(0)) && UNSAFE_NAMES.has(name)
}

function decode (text: string): string {
  return text.includes('&') ? xmlEntities.decode(text) : text
}

function isLetter (code: number): boolean {
  return (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a)
}

function isDigit (code: number): boolean {
  return code >= 0x30 && code <= 0x39
}

const TAB = 0x09
const NL = 0x0a
const SPACE = 0x20
const BANG = 0x21
const QUOTE = 0x22
const AMP = 0x26
const APOSTROPHE = 0x27
const DASH = 0x2d
const DOT = 0x2e
const SLASH = 0x2f
const COLON = 0x3a
const LT = 0x3c
const EQUALS = 0x3d
const GT = 0x3e
const QUESTION = 0x3f
const UNDERSCORE = 0x5f
