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
 * the encoding plus the loop (docs/performance.md, "Issue 24, the fifth session"). The answer is the one `timingSafeEqual` gives on the two UTF-8 encodings
 * (test/unit/same-secret.test.ts holds it to that). UTF-8, not latin1: latin1 keeps one byte of each character,
 * and two different query values would compare equal.
 */
export class RememberedSecret {
  /** The secret's UTF-8 bytes, zero-padded to whole words. */
  private readonly words: Int32Array
  private readonly byteLength: number

  constructor (readonly text: string) {
    const bytes = Buffer.from(text)
    this.byteLength = bytes.length
    this.words = new Int32Array((bytes.length + 3) >> 2)
    Buffer.from(this.words.buffer).set(bytes)
  }

  /** Whether `presented` is the remembered secret, in time that depends on the lengths only. */
  matches (presented: string): boolean {
    const length = presented.length
    if (length !== this.text.length) return false
    const words = this.words
    const wordBytes = words.length << 2
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    const room = Math.max(3 * length, wordBytes)
    if (room > scratchBytes.length) grow(room)
    // Locals, not the module's `let`s, so the loop reads them once.
    const bytes = scratchBytes
    const presentedWords = scratchWords
    const written = bytes.write(presented, 0, room, 'utf8')
    // Zero the rest of the compared words, so bytes of an earlier call never take part. A presented secret longer
    // in UTF-8 is told apart by its byte length (its bytes past the remembered words are not compared).
    if (written < wordBytes) bytes.fill(0, written, wordBytes)
    let difference = written ^ this.byteLength
    for (let i = 0, count = words.length; i < count; i++) difference |= words[i]! ^ presentedWords[i]!
    return difference === 0
  }
}

function grow (bytes: number): void {
  scratch = new ArrayBuffer((bytes + 3) & ~3)
  scratchBytes = Buffer.from(scratch)
  scratchWords = new Int32Array(scratch)
}
