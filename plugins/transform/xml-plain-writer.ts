import type { XmlSettings } from './xml-settings.js'
import { OUTSIDE, plainReaderFits } from './xml-plain-reader.js'

/**
 * A writer for plain JSON: the shape of a SOAP call's envelope and of most XML bodies, written in one pass instead of
 * through fast-xml-parser's builder (its path matcher and name hooks). It gives exactly the library's text (xml.ts's
 * builder, with the policy's settings), or `OUTSIDE` for anything it does not cover, and the library writes that
 * instead. test/unit/transform-xml-plain-writer.test.ts compares the two on generated values.
 *
 * Plain JSON here: objects (with or without a prototype) whose keys are element names as the plain reader reads
 * them, or the attribute prefix and such a name; element values strings, finite numbers or plain objects; attribute
 * values strings other than `"true"` (which the library writes as a bare attribute name); no text key, array,
 * boolean or null; nesting under 64 levels.
 */

const MAX_DEPTH = 64
const NAME = /^[A-Za-z_][A-Za-z0-9_.-]*(?::[A-Za-z_][A-Za-z0-9_.-]*)?$/
const SPECIAL = /[&<>'"]/
const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '\'': '&apos;', '"': '&quot;' }

/** The writer for `settings`, or undefined when their keys could be taken for element names (plainReaderFits). */
export function plainXmlWriter (settings: XmlSettings): ((value: Record<string, unknown>) => string | typeof OUTSIDE) | undefined {
  if (!plainReaderFits(settings)) return undefined
  const prefix = settings.attribute_prefix
  return function writePlainXml (value) {
    // The library leaves a root object's attributes out, whatever their values: its to do.
    for (const key in value) if (key.startsWith(prefix)) return OUTSIDE
    try {
      return children(value, prefix, 0)
    } catch (error) {
      if (error === OUTSIDE) return OUTSIDE
      throw error
    }
  }
}

/** The elements of an object's keys that are not attributes, in the object's key order. */
function children (object: Record<string, unknown>, prefix: string, depth: number): string {
  if (depth >= MAX_DEPTH) throw OUTSIDE
  let out = ''
  for (const key in object) {
    if (!Object.hasOwn(object, key) || key.startsWith(prefix)) continue
    if (!NAME.test(key)) throw OUTSIDE
    out += element(key, object[key], prefix, depth)
  }
  return out
}

function element (name: string, value: unknown, prefix: string, depth: number): string {
  if (typeof value === 'string') return `<${name}>${escape(value)}</${name}>`
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw OUTSIDE
    return `<${name}>${Object.is(value, -0) ? '-0' : String(value)}</${name}>`
  }
  if (!isPlainObject(value)) throw OUTSIDE
  return `<${name}${attributes(value, prefix)}>${children(value, prefix, depth + 1)}</${name}>`
}

function attributes (object: Record<string, unknown>, prefix: string): string {
  let out = ''
  for (const key in object) {
    if (!Object.hasOwn(object, key) || !key.startsWith(prefix)) continue
    const name = key.slice(prefix.length)
    const value = object[key]
    if (!NAME.test(name) || typeof value !== 'string' || value === 'true') throw OUTSIDE
    out += ` ${name}="${escape(value)}"`
  }
  return out
}

function escape (text: string): string {
  return SPECIAL.test(text) ? text.replace(/[&<>'"]/g, (c) => ESCAPES[c] as string) : text
}

function isPlainObject (value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const prototype = Object.getPrototypeOf(value)
  return prototype === null || prototype === Object.prototype
}
