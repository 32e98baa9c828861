import type { EntityDecoderOptions } from 'fast-xml-parser'

const NAMED: Readonly<Record<string, string>> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: '\'' }
const REFERENCE = /&(?:#(\d{1,8})|#x([0-9a-fA-F]{1,8})|(lt|gt|amp|quot|apos));/g

function character (code: number, reference: string): string {
  // Not a character (NUL, a surrogate, past U+10FFFF): left as written rather than made up.
  if (code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return reference
  return String.fromCodePoint(code)
}

/**
 * The only references the gateway decodes: the five XML entities and numeric ones (`&#65;`, `&#x41;`). Any other
 * named reference stays as written; a document declaring entities is refused before parsing (xml.ts), so there are
 * none of its own to add.
 */
export const xmlEntities: EntityDecoderOptions = {
  setExternalEntities () {},
  addInputEntities () {},
  reset () {},
  setXmlVersion () {},
  decode (text) {
    if (!text.includes('&')) return text
    return text.replace(REFERENCE, (reference, decimal: string | undefined, hex: string | undefined, name: string | undefined) => {
      if (name !== undefined) return NAMED[name] as string
      return character(decimal !== undefined ? Number(decimal) : Number.parseInt(hex as string, 16), reference)
    })
  },
}
