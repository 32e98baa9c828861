import type { TransformOptions } from './schema.js'
import { xmlCodec, XmlError, type XmlCodec } from './xml.js'

/** Why a body could not be read or written in its format; `unsafe` for XML with a DTD or entity declaration. */
export class FormatError extends Error {
  constructor (message: string, readonly unsafe = false) {
    super(message)
  }
}

/** One body format: how bytes become a JSON value and back, and which content types it reads. */
export interface BodyFormat {
  readonly name: 'json' | 'xml'
  readonly contentType: string
  /** Whether a request's Content-Type is one this format reads. */
  accepts (contentType: string): boolean
  decode (bytes: Buffer): unknown
  encode (value: unknown): Buffer
}

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i
const XML_TYPE = /^(?:application|text)\/(?:[\w.+-]+\+)?xml\s*(?:;|$)/i

export const jsonFormat: BodyFormat = {
  name: 'json',
  contentType: 'application/json',
  accepts: (type) => JSON_TYPE.test(type),
  decode (bytes) {
    try {
      return JSON.parse(bytes.toString('utf8'))
    } catch {
      throw new FormatError('not valid JSON')
    }
  },
  encode: (value) => Buffer.from(JSON.stringify(value)),
}

function xmlFormat (codec: XmlCodec): BodyFormat {
  return {
    name: 'xml',
    contentType: 'application/xml',
    accepts: (type) => XML_TYPE.test(type),
    decode (bytes) {
      try {
        return codec.parse(bytes.toString('utf8'))
      } catch (error) {
        if (error instanceof XmlError) throw new FormatError(error.message, error.unsafe)
        throw error
      }
    },
    encode (value) {
      try {
        return Buffer.from(codec.build(value))
      } catch (error) {
        if (error instanceof XmlError) throw new FormatError(error.message)
        throw error
      }
    },
  }
}

/** The formats of one policy's options: JSON, and XML built once with the policy's `xml` settings. */
export function formatsOf (options: TransformOptions): (name: 'json' | 'xml' | undefined) => BodyFormat {
  let xml: BodyFormat | undefined
  return (name) => {
    if (name !== 'xml') return jsonFormat
    xml ??= xmlFormat(xmlCodec(options.xml))
    return xml
  }
}

/** The SOAP answer's format: XML with namespace prefixes stripped (the envelope's prefix is the server's choice). */
export function soapAnswerFormat (options: TransformOptions): BodyFormat {
  return xmlFormat(xmlCodec({ ...options.xml, namespaces: 'strip' }))
}
