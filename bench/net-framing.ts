/**
 * Where an HTTP/1.1 response body ends, read from its head (RFC 9112 §6.3) for the raw-`net` floor
 * (bench/net-relay.ts): by Content-Length, by chunked framing, not at all (no body), or when the upstream closes.
 * Each `consume` is given the bytes of the body as they arrive and answers the index just past its end, or -1.
 */
export interface BodyFraming {
  /** Reads `chunk` from `from`; the index just past the body's last byte, or -1 when the body goes on. */
  consume (chunk: Buffer, from: number): number
  /** The body ends when the upstream closes its side: the socket cannot be kept. */
  readonly untilClose: boolean
}

/** A response head as the floor needs it: its status, its framing, and whether the upstream keeps the socket. */
export interface ResponseHead {
  status: number
  framing: BodyFraming
  keepAlive: boolean
}

class NoBody implements BodyFraming {
  readonly untilClose = false
  consume (_chunk: Buffer, from: number): number { return from }
}

class LengthBody implements BodyFraming {
  readonly untilClose = false
  constructor (private remaining: number) {}
  consume (chunk: Buffer, from: number): number {
    const available = chunk.length - from
    if (available < this.remaining) {
      this.remaining -= available
      return -1
    }
    const end = from + this.remaining
    this.remaining = 0
    return end
  }
}

class UntilClose implements BodyFraming {
  readonly untilClose = true
  consume (): number { return -1 }
}

const LF = 10

/** Chunked transfer coding: chunk-size lines (extensions ignored), each chunk's data and CRLF, then trailer lines up to an empty one. */
export class ChunkedBody implements BodyFraming {
  readonly untilClose = false
  private state: 'size' | 'data' | 'trailer' = 'size'
  private line = ''
  private remaining = 0

  consume (chunk: Buffer, from: number): number {
    let at = from
    while (at < chunk.length) {
      if (this.state === 'data') {
        const take = Math.min(this.remaining, chunk.length - at)
        at += take
        this.remaining -= take
        if (this.remaining === 0) this.state = 'size'
        continue
      }
      const newline = chunk.indexOf(LF, at)
      if (newline === -1) {
        this.line += chunk.toString('latin1', at)
        return -1
      }
      const text = (this.line + chunk.toString('latin1', at, newline)).trimEnd()
      this.line = ''
      at = newline + 1
      if (this.state === 'trailer') {
        if (text === '') return at
        continue
      }
      const size = Number.parseInt(text.split(';')[0] ?? '', 16)
      if (!Number.isFinite(size) || size < 0) throw new Error(`bad chunk size line ${JSON.stringify(text)}`)
      if (size === 0) this.state = 'trailer'
      else {
        this.state = 'data'
        // The chunk's data, then its CRLF.
        this.remaining = size + 2
      }
    }
    return -1
  }
}

/** Parses a response head (the bytes before its blank line, latin1); throws on a status line it cannot read. */
export function parseResponseHead (head: string, requestMethod = 'GET'): ResponseHead {
  const lines = head.split('\r\n')
  const status = Number((lines[0] ?? '').split(' ')[1])
  if (!Number.isInteger(status)) throw new Error(`bad status line ${JSON.stringify(lines[0])}`)
  let length: number | undefined
  let chunked = false
  let connection: string[] = []
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i] as string
    const colon = line.indexOf(':')
    if (colon === -1) continue
    const name = line.slice(0, colon).trim().toLowerCase()
    const value = line.slice(colon + 1).trim().toLowerCase()
    if (name === 'content-length') length = Number(value)
    else if (name === 'transfer-encoding') chunked = value.split(',').some((coding) => coding.trim() === 'chunked')
    else if (name === 'connection') connection = value.split(',').map((token) => token.trim())
  }
  const keepAlive = (lines[0] ?? '').startsWith('HTTP/1.1') ? !connection.includes('close') : connection.includes('keep-alive')
  const bodiless = requestMethod === 'HEAD' || (status >= 100 && status < 200) || status === 204 || status === 304
  const framing = bodiless ? new NoBody() : chunked ? new ChunkedBody() : length !== undefined ? new LengthBody(length) : new UntilClose()
  return { status, framing, keepAlive: keepAlive && !framing.untilClose }
}
