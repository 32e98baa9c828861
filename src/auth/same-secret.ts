/**
 * The scratch a presented secret is encoded into, reused by every call (JavaScript runs one call at a time), read as
 * 32-bit words. Grown when a longer secret comes; never shrunk.
 */
let scratch = new ArrayBuffer(4096)
let scratchBytes = Buffer.from(scratch)
let scratchWords = new Int32Array(scratch)

/**
 * A secret (token, API key) a connection's slot remembers, to compare the next requests' secrets against in
 * constant time: a connection a load balancer reuses for several callers holds another caller's secret in its
 * memory, and `===` would time how much of it a guess got right. Only the length is told apart early (it is not
 * secret: a key's length is the same for all).
 *
 * It runs on every authenticated request of a kept-alive connection, so it is built for that: the remembered side is
 * UTF-8 encoded once, when the slot takes it; a presented secret is encoded into one reused scratch and compared
 * word by word with XOR/OR, a loop whose length depends on the lengths only, allocating nothing. `Buffer.from` on
 * both sides and `timingSafeEqual` cost about 6k instructions and 1.3 KB per 650-character token, this 0.6k for
 * the encoding plus the loop (docs/performance.md, "Issue 24, the fifth session"). The answer is the one
 * `timingSafeEqual` gives on the two UTF-8 encodings (test/unit/same-secret.test.ts holds it to that). UTF-8, not
 * latin1: latin1 keeps one byte of each character, and two different query values would compare equal.
 */
export class RememberedSecret {
  /** The secret's UTF-8 bytes, zero-padded to whole words. */
  private readonly words: Int32Array
  private readonly byteLength: number

  constructor (readonly text: string) {
    // Encoded in the scratch, then copied to a buffer of its own (from node's pool, like `Buffer.from`'s) and read as
    // words in place: a slot takes a new secret on every request of a connection a load balancer shares between
    // callers, and a typed array of its own would cost each of them a backing store (docs/performance.md).
    this.byteLength = encode(text)
    const wordBytes = (this.byteLength + 3) & ~3
    const own = Buffer.allocUnsafe(wordBytes)
    scratchBytes.copy(own, 0, 0, wordBytes)
    // The pool hands out 8-byte aligned slices; a typed array needs its offset aligned to its element size.
    this.words = own.byteOffset % 4 === 0 ? new Int32Array(own.buffer, own.byteOffset, wordBytes >> 2) : new Int32Array(Uint8Array.from(own).buffer)
  }

  /** Whether `presented` is the remembered secret, in time that depends on the lengths only. */
  matches (presented: string): boolean {
    const length = presented.length
    if (length !== this.text.length) return false
    const words = this.words
    // Equal byte lengths mean the same number of words, each zero-padded; different ones are told apart by the
    // lengths (the words compared past a shorter presented secret's end may hold an earlier call's bytes).
    const written = encode(presented)
    // A local, not the module's `let`, so the loop reads it once.
    const presentedWords = scratchWords
    let difference = written ^ this.byteLength
    // Two words per turn into two accumulators: 20–25 % less time for a 650-character token than one (a
    // microbenchmark, 300,000 calls pinned; four per turn was slower again).
    let odd = 0
    const count = words.length
    let i = 0
    for (; i + 1 < count; i += 2) {
      difference |= words[i]! ^ presentedWords[i]!
      odd |= words[i + 1]! ^ presentedWords[i + 1]!
    }
    if (i < count) difference |= words[i]! ^ presentedWords[i]!
    return (difference | odd) === 0
  }
}

/**
 * Writes `text` as UTF-8 at the start of the scratch (grown when short: UTF-8 takes at most 3 bytes per UTF-16 unit)
 * and zeroes the rest of its last word, so no byte of an earlier call is part of it. Returns the bytes written.
 */
function encode (text: string): number {
  const room = 3 * text.length
  if (room > scratchBytes.length) {
    scratch = new ArrayBuffer((room + 3) & ~3)
    scratchBytes = Buffer.from(scratch)
    scratchWords = new Int32Array(scratch)
  }
  const bytes = scratchBytes
  const written = bytes.write(text, 0, room, 'utf8')
  // At most three bytes: stored one by one (`fill` is a call into C++ that cost more than the stores).
  for (let i = written, end = (written + 3) & ~3; i < end; i++) bytes[i] = 0
  return written
}
