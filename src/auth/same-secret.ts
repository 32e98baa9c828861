/**
 * The scratch both secrets are encoded into, reused by every call (JavaScript runs one call at a time): two halves,
 * each read as 32-bit words. Grown when a longer pair comes; never shrunk.
 */
let scratch = new ArrayBuffer(4096)
let scratchBytes = Buffer.from(scratch)
let scratchWords = new Int32Array(scratch)

/**
 * A remembered secret (token, API key) against the presented one in constant time: a connection a load balancer
 * reuses for several callers holds another caller's secret in its memory, and `===` would time how much of it a
 * guess got right. Only the length is told apart early (it is not secret: a key's length is the same for all).
 *
 * It runs on every authenticated request of a kept-alive connection (the verified-token and API-key slots), so it
 * allocates nothing: both sides are encoded as UTF-8 into one reused scratch and compared word by word with XOR/OR,
 * a loop whose length depends on the lengths only. `Buffer.from` twice and `timingSafeEqual` cost 1.7 µs and 1.3 KB
 * per 650-character token on the bench box; this costs 0.8–1.1 µs and nothing (docs/performance.md). The answer is
 * the one `timingSafeEqual` gives on the two UTF-8 encodings (test/unit/same-secret.test.ts holds it to that).
 */
export function sameSecret (remembered: string, presented: string): boolean {
  const length = remembered.length
  if (length !== presented.length) return false
  // UTF-8 takes at most 3 bytes per UTF-16 unit. UTF-8, not latin1: latin1 keeps one byte of each character, and two
  // different query values would compare equal.
  const half = (3 * length + 3) & ~3
  if (2 * half > scratchBytes.length) grow(2 * half)
  const a = scratchBytes.write(remembered, 0, half, 'utf8')
  const b = scratchBytes.write(presented, half, half, 'utf8')
  // Zero the tail of the last word of each side, so bytes of an earlier call never take part.
  const used = (Math.max(a, b) + 3) & ~3
  scratchBytes.fill(0, a, used)
  scratchBytes.fill(0, half + b, half + used)
  const words = used >> 2
  const offset = half >> 2
  let difference = a ^ b
  for (let i = 0; i < words; i++) difference |= scratchWords[i]! ^ scratchWords[offset + i]!
  return difference === 0
}

function grow (bytes: number): void {
  scratch = new ArrayBuffer(bytes)
  scratchBytes = Buffer.from(scratch)
  scratchWords = new Int32Array(scratch)
}
