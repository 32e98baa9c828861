/**
 * One WebAssembly function over a memory of its own: `differ(length, offset)` is 1 when the `length` bytes at 0 and
 * the `length` bytes at `offset` differ anywhere, else 0. It reads 8-byte words and ORs their XORs, with no early
 * exit: its time depends on `length` only (same-secret.ts, the constant-time comparison of secrets). WebAssembly
 * because V8 compiles that loop to plain 64-bit loads, where JavaScript over typed arrays checks every access.
 *
 * The module, as text:
 *   (module (memory (export "memory") 1)
 *     (func (export "differ") (param $length i32) (param $offset i32) (result i32)
 *       (local $i i32) (local $d i64)
 *       (block $done (loop $next
 *         (br_if $done (i32.ge_u (local.get $i) (local.get $length)))
 *         (local.set $d (i64.or (local.get $d)
 *           (i64.xor (i64.load (local.get $i)) (i64.load (i32.add (local.get $i) (local.get $offset))))))
 *         (local.set $i (i32.add (local.get $i) (i32.const 8)))
 *         (br $next)))
 *       (i64.ne (local.get $d) (i64.const 0))))
 */
const I32 = 0x7f
const I64 = 0x7e

/** A section: its id, its size (one LEB128 byte: every section here is under 128 bytes), its bytes. */
function section (id: number, bytes: number[]): number[] {
  if (bytes.length >= 0x80) throw new Error('section too long for a one-byte size')
  return [id, bytes.length, ...bytes]
}

const name = (text: string): number[] => [text.length, ...Buffer.from(text, 'latin1')]

const body = [
  0x02, 0x01, I32, 0x01, I64, // locals: $i i32, $d i64 (after the params $length 0 and $offset 1)
  0x02, 0x40, // block $done
  0x03, 0x40, // loop $next
  0x20, 0x02, 0x20, 0x00, 0x4f, 0x0d, 0x01, // br_if $done (i32.ge_u $i $length)
  0x20, 0x03, // $d
  0x20, 0x02, 0x29, 0x03, 0x00, // i64.load $i
  0x20, 0x02, 0x20, 0x01, 0x6a, 0x29, 0x03, 0x00, // i64.load ($i + $offset)
  0x85, 0x84, 0x21, 0x03, // $d = $d | (xor)
  0x20, 0x02, 0x41, 0x08, 0x6a, 0x21, 0x02, // $i += 8
  0x0c, 0x00, // br $next
  0x0b, 0x0b, // end loop, end block
  0x20, 0x03, 0x42, 0x00, 0x52, // i64.ne $d 0
  0x0b, // end
]

const WORDS_DIFFER_MODULE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // \0asm, version 1
  ...section(1, [0x01, 0x60, 0x02, I32, I32, 0x01, I32]), // one type: (i32, i32) -> i32
  ...section(3, [0x01, 0x00]), // one function, of type 0
  ...section(5, [0x01, 0x00, 0x01]), // one memory, 1 page (64 KiB) at first
  ...section(7, [0x02, ...name('memory'), 0x02, 0x00, ...name('differ'), 0x00, 0x00]),
  ...section(10, [0x01, body.length, ...body]),
])

const instance = new WebAssembly.Instance(new WebAssembly.Module(WORDS_DIFFER_MODULE))
const memory = instance.exports.memory as WebAssembly.Memory

export const wordsDiffer = {
  differ: instance.exports.differ as (length: number, offset: number) => number,
  /** The memory's bytes (a view that `grow` replaces). */
  bytes (): Buffer {
    return Buffer.from(memory.buffer)
  },
  /** Grows the memory to at least `bytes` and returns the new view (the old one is detached). */
  grow (bytes: number): Buffer {
    const pages = Math.ceil(bytes / 65536) - memory.buffer.byteLength / 65536
    if (pages > 0) memory.grow(pages)
    return Buffer.from(memory.buffer)
  },
}
