import type { IncomingHttpHeaders } from 'node:http'
import { Transform, type TransformCallback } from 'node:stream'
import { GatewayError } from '../errors/gateway-error.js'

/**
 * Whether a request declares a body: a Content-Length above 0 or a Transfer-Encoding (without either, node's
 * parser reads none). A request with a body is never retried: its body was consumed by the first attempt.
 */
export function hasBody (headers: IncomingHttpHeaders): boolean {
  const length = headers['content-length']
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0')
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
