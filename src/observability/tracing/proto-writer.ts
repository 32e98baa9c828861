/**
 * The protobuf wire primitives lanegate's OTLP encoder writes with, into one Buffer. A length-delimited field
 * reserves one byte for its length and moves its content when the length needs more: most of the messages of a
 * span are shorter than 128 bytes, and the bytes come out as a sizing pass would write them (shortest varints).
 */
export class ProtoWriter {
  buf: Buffer
  pos = 0

  constructor (size: number) {
    this.buf = Buffer.allocUnsafe(size)
  }

  /** What was written: a view on the buffer, not a copy. */
  finish (): Buffer {
    return this.buf.subarray(0, this.pos)
  }

  ensure (bytes: number): void {
    if (this.pos + bytes > this.buf.length) this.#grow(bytes)
  }

  #grow (bytes: number): void {
    let size = this.buf.length * 2
    while (size < this.pos + bytes) size *= 2
    const bigger = Buffer.allocUnsafe(size)
    this.buf.copy(bigger, 0, 0, this.pos)
    this.buf = bigger
  }

  /** One byte: a field's key known to fit one (fields 1–15). */
  byte (value: number): void {
    this.ensure(1)
    this.buf[this.pos++] = value
  }

  /** Bytes written before, as they are. */
  copy (bytes: Buffer): void {
    this.ensure(bytes.length)
    this.pos += bytes.copy(this.buf, this.pos)
  }

  /** A field's key: number and wire type (0 varint, 1 fixed64, 2 length-delimited, 5 fixed32). */
  tag (field: number, wireType: number): void {
    this.varint((field << 3) | wireType)
  }

  /**
   * A varint of any number the SDK's writer takes: unsigned 32-bit values directly, others as 64-bit two's
   * complement (a negative int64 takes ten bytes). Written exactly as @opentelemetry/otlp-transformer's writer does,
   * including what it makes of a value that is not a number (`undefined` becomes 0).
   */
  varint (value: number): void {
    this.ensure(10)
    const buf = this.buf
    if (value >= 0 && value <= 0xffffffff) {
      let v = value >>> 0
      while (v > 0x7f) {
        buf[this.pos++] = (v & 0x7f) | 0x80
        v >>>= 7
      }
      buf[this.pos++] = v
      return
    }
    let low: number
    let high: number
    if (value >= 0) {
      low = value >>> 0
      high = (value / 0x100000000) >>> 0
    } else {
      const abs = Math.abs(value)
      low = ~(abs >>> 0) >>> 0
      high = ~((abs / 0x100000000) >>> 0) >>> 0
      low = (low + 1) >>> 0
      if (low === 0) high = (high + 1) >>> 0
    }
    while (high > 0 || low > 0x7f) {
      buf[this.pos++] = (low & 0x7f) | 0x80
      low = ((low >>> 7) | (high << 25)) >>> 0
      high >>>= 7
    }
    buf[this.pos++] = low & 0x7f
  }

  fixed32 (value: number): void {
    this.ensure(4)
    this.#uint32(value >>> 0)
  }

  fixed64 (low: number, high: number): void {
    this.ensure(8)
    this.#uint32(low >>> 0)
    this.#uint32(high >>> 0)
  }

  /** Little-endian, stored byte by byte: Buffer's writeUInt32LE checks its range first. */
  #uint32 (value: number): void {
    const buf = this.buf
    const at = this.pos
    buf[at] = value
    buf[at + 1] = value >>> 8
    buf[at + 2] = value >>> 16
    buf[at + 3] = value >>> 24
    this.pos = at + 4
  }

  double (value: number): void {
    this.ensure(8)
    this.buf.writeDoubleLE(value, this.pos)
    this.pos += 8
  }

  /**
   * A UTF-8 string with its length. A short string is copied while it is ASCII, which costs less than a call of
   * `Buffer.write` into native code (docs/performance.md); one with other characters, or a long one, is written by
   * `Buffer.write` (UTF-8 in native code, lone surrogates as U+FFFD, as the SDK's TextEncoder writes them).
   */
  string (value: string): void {
    const length = value.length
    // At most 3 bytes per UTF-16 unit: up to 42 units the length fits the one byte reserved before the text.
    if (length <= 42) {
      this.ensure(1 + length * 3)
      const buf = this.buf
      const at = this.pos + 1
      let i = 0
      for (; i < length; i++) {
        const code = value.charCodeAt(i)
        if (code >= 0x80) break
        buf[at + i] = code
      }
      const written = i === length ? length : buf.write(value, at)
      buf[at - 1] = written
      this.pos = at + written
      return
    }
    const bytes = Buffer.byteLength(value)
    this.varint(bytes)
    this.ensure(bytes)
    this.pos += this.buf.write(value, this.pos)
  }

  /**
   * Bytes given as hex (a trace or span id) with their length, decoded as the SDK's `hexToBinary` decodes them
   * (also what it makes of a character that is not a hex digit). Decoded here rather than by Buffer's 'hex'
   * write: a 16-byte id costs less than the call into native code.
   */
  hexBytes (hex: string): void {
    const bytes = hex.length >>> 1
    this.varint(bytes)
    this.ensure(bytes)
    const buf = this.buf
    const at = this.pos
    for (let i = 0; i < bytes; i++) buf[at + i] = (hexDigit(hex.charCodeAt(2 * i)) << 4) | hexDigit(hex.charCodeAt(2 * i + 1))
    this.pos += bytes
  }

  bytes (value: Uint8Array): void {
    this.varint(value.length)
    this.ensure(value.length)
    this.buf.set(value, this.pos)
    this.pos += value.length
  }

  /** Reserves the length byte of a length-delimited field; `end` with what this returns writes the length. */
  begin (): number {
    this.ensure(1)
    return this.pos++
  }

  end (start: number): void {
    const length = this.pos - start - 1
    if (length < 0x80) {
      this.buf[start] = length
      return
    }
    const size = length < 0x4000 ? 2 : length < 0x200000 ? 3 : length < 0x10000000 ? 4 : 5
    this.ensure(size - 1)
    this.buf.copyWithin(start + size, start + 1, this.pos)
    this.pos += size - 1
    let at = start
    let v = length
    while (v > 0x7f) {
      this.buf[at++] = (v & 0x7f) | 0x80
      v >>>= 7
    }
    this.buf[at] = v
  }
}

/** A hex digit's value by char code, as the SDK's `hexToBinary` reads it: `A`–`F` and anything else as `code - 55`. */
const HEX_DIGITS = Int32Array.from({ length: 128 }, (_, code) => code >= 48 && code <= 57 ? code - 48 : code >= 97 && code <= 102 ? code - 87 : code - 55)

function hexDigit (code: number): number {
  return code < 128 ? HEX_DIGITS[code] : code - 55
}
