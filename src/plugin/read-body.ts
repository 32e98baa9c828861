import type { IncomingMessage } from 'node:http'

/**
 * Reads the whole request body (up to `limit` bytes) without taking it from whoever reads the request next: the
 * bytes are pulled with `read()` and, once the message is complete, put back at the front of the stream with
 * `unshift` (allowed until 'end' has been emitted; with data buffered again it is not). So the gateway's body
 * parser, or the relay streaming it upstream, reads exactly the bytes the caller sent. Resolves undefined when the
 * body is larger than `limit` (the request is then refused and its rest never read).
 */
export function readBodyAndKeepIt (raw: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  // With Content-Length the body is complete at that many bytes; a chunked body when the parser says so.
  const declared = raw.headers['content-length'] === undefined ? undefined : Number(raw.headers['content-length'])
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    function finish (): void {
      raw.removeListener('readable', pull)
      raw.removeListener('error', failed)
      raw.removeListener('aborted', aborted)
    }
    function failed (error: Error): void {
      finish()
      reject(error)
    }
    function aborted (): void {
      failed(new Error('the client aborted the request body'))
    }
    function pull (): void {
      let chunk: Buffer | null
      while ((chunk = raw.read() as Buffer | null) !== null) {
        size += chunk.length
        if (size > limit) {
          finish()
          resolve(undefined)
          return
        }
        chunks.push(chunk)
      }
      if (declared === undefined ? raw.complete !== true : size < declared) return
      finish()
      const body = Buffer.concat(chunks, size)
      if (body.length > 0) raw.unshift(body)
      resolve(body)
    }
    raw.on('readable', pull)
    raw.on('error', failed)
    raw.on('aborted', aborted)
  })
}
