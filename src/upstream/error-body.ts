import type { Readable } from 'node:stream'
import zlib from 'node:zlib'

export const TRUNCATED_MARKER = ' [truncated]'

/**
 * Reads at most `limit` bytes of a failing upstream's body as text, for `upstream_body`. A compressed body is
 * decoded first (the caller gets readable text, never gzip bytes in JSON); a longer body is cut, marked with
 * " [truncated]", and the rest is not read: `body` is destroyed, which the relay takes as the signal to drop the
 * upstream request rather than drain it. A body that breaks off (errors) keeps what arrived, also marked. Never
 * rejects.
 */
export function readUpstreamBody (body: Readable, contentEncoding: string | string[] | undefined, limit: number): Promise<string> {
  return new Promise((resolve) => {
    const source = decoded(body, contentEncoding)
    const chunks: Buffer[] = []
    let size = 0
    let done = false
    const finish = (truncated: boolean): void => {
      if (done) return
      done = true
      const text = Buffer.concat(chunks).subarray(0, limit).toString('utf8')
      if (truncated) {
        body.destroy()
        if (source !== body) source.destroy()
      }
      resolve(truncated ? text + TRUNCATED_MARKER : text)
    }
    source.on('data', (chunk: Buffer) => {
      chunks.push(chunk)
      size += chunk.length
      if (size > limit) finish(true)
    })
    source.on('end', () => finish(false))
    source.on('error', () => finish(true))
    source.on('close', () => finish(true))
  })
}

function decoded (body: Readable, contentEncoding: string | string[] | undefined): Readable {
  const encoding = String(contentEncoding ?? '').trim().toLowerCase()
  let decoder: zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress | undefined
  if (encoding === 'gzip' || encoding === 'x-gzip') decoder = zlib.createGunzip()
  else if (encoding === 'deflate') decoder = zlib.createInflate()
  else if (encoding === 'br') decoder = zlib.createBrotliDecompress()
  if (decoder === undefined) return body
  body.on('error', (error) => decoder.destroy(error))
  return body.pipe(decoder)
}
