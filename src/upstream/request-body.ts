import type { IncomingHttpHeaders } from 'node:http'
import { Transform, type TransformCallback } from 'node:stream'
import { GatewayError } from '../plugin/gateway-error.js'

/**
 * Whether a request declares a body: a Content-Length above 0 or a Transfer-Encoding (without either, node's
 * parser reads none). A request with a body is never retried: its body was consumed by the first attempt.
 * HTTP/2 has no Transfer-Encoding: there a request without Content-Length has a body unless its HEADERS frame
 * ended the stream (`h2Stream.endAfterHeaders`, what a GET from any h2 client does).
 */
export function hasBody (headers: IncomingHttpHeaders, h2Stream?: { readonly endAfterHeaders?: boolean }): boolean {
  const length = headers['content-length']
  if (headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0')) return true
  return length === undefined && h2Stream !== undefined && h2Stream.endAfterHeaders === false
}

/** The HTTP/2 stream of a request served over h2 (node's compatibility API), else undefined. */
export function h2StreamOf (req: object): { readonly endAfterHeaders?: boolean } | undefined {
  return (req as { stream?: { endAfterHeaders?: boolean } }).stream
}

/** Passes a body through while counting it; crossing the limit is an error (the relay answers 413). */
export class ByteLimit extends Transform {
  private seen = 0
  constructor (private readonly limit: number) {
    super()
  }

  override _transform (chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.seen += chunk.length
    if (this.seen > this.limit) {
      callback(new GatewayError('payload_too_large'))
      return
    }
    callback(null, chunk)
  }
}
