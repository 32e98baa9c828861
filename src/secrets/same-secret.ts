import { wordsDiffer } from './words-differ.js'

/**
 * The scratch both sides of a comparison are written to: one WebAssembly memory (words-differ.ts), the presented
 * secret at its start and the remembered one at its middle. JavaScript runs one call at a time, so one scratch
 * serves every call. Grown when a longer secret comes (`grow` gives the memory a new buffer); never shrunk.
 */
let scratchBytes = wordsDiffer.bytes()
let half = scratchBytes.length / 2

/**
 * A secret (token, API key) a connection's slot remembers, to compare the next requests' secrets against in
 * constant time: a connection a load balancer reuses for several callers holds another caller's secret in its
 * memory, and `===` would time how much of it a guess got right. Only the length is told apart early (it is not
 * secret: a key's length is the same for all).
 *
 * It runs on every authenticated request of a kept-alive connection, so it is built for that: the remembered side is
 * UTF-8 encoded once, when the slot takes it; a presented secret is encoded into the scratch, the remembered bytes
 * are copied beside it, and a WebAssembly loop compares them 8 bytes per step with XOR/OR: a loop whose length
 * depends on the lengths only, allocating nothing, several times cheaper than `Buffer.from` and `timingSafeEqual`
 * (docs/performance.md, "The tricks in the code"). The answer is the one
 * `timingSafeEqual` gives on the two UTF-8 encodings (test/unit/same-secret.test.ts holds it to that). UTF-8, not
 * latin1: latin1 keeps one byte of each character, and two different query values would compare equal.
 */
export class RememberedSecret {
  /** The secret's UTF-8 bytes, zero-padded to whole 8-byte words. */
  private readonly bytes: Buffer
  private readonly byteLength: number

  constructor (readonly text: string) {
    // Encoded in the scratch, then copied to a buffer of its own (from node's pool, like `Buffer.from`'s): a slot
    // takes a new secret on every request of a connection a load balancer shares between callers.
    this.byteLength = encode(text)
    this.bytes = Buffer.allocUnsafe(padded(this.byteLength))
    scratchBytes.copy(this.bytes, 0, 0, this.bytes.length)
  }

  /** Whether `presented` is the remembered secret, in time that depends on the lengths only. */
  matches (presented: string): boolean {
    if (presented.length !== this.text.length) return false
    // Equal byte lengths mean the same number of words, each zero-padded; different ones are told apart by the
    // lengths (the words compared past a shorter secret's end may hold an earlier call's bytes).
    const written = encode(presented)
    // set(), not copy(): Buffer's copy() makes a view of the source on every call.
    scratchBytes.set(this.bytes, half)
    return (wordsDiffer.differ(padded(written), half) | (written ^ this.byteLength)) === 0
  }
}

/** `byteLength` rounded up to whole 8-byte words. */
function padded (byteLength: number): number {
  return (byteLength + 7) & ~7
}

/**
 * Writes `text` as UTF-8 at the start of the scratch (grown when short: UTF-8 takes at most 3 bytes per UTF-16 unit,
 * and the remembered side needs as much room again) and zeroes the rest of its last word, so no byte of an earlier
 * call is part of it. Returns the bytes written.
 */
function encode (text: string): number {
  const room = 3 * text.length
  if (padded(room) > half) {
    scratchBytes = wordsDiffer.grow(2 * padded(room))
    half = scratchBytes.length / 2
  }
  const bytes = scratchBytes
  const written = bytes.write(text, 0, room, 'utf8')
  // At most seven bytes: stored one by one (`fill` is a call into C++ that cost more than the stores).
  for (let i = written, end = padded(written); i < end; i++) bytes[i] = 0
  return written
}
