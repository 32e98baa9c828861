import type { ProtoWriter } from './proto-writer.js'

/** Keys remembered at most: attribute keys are few (lanegate sets about fifteen); a stranger's many are written plainly. */
const MAX_KEYS = 256

interface Remembered {
  value: string | number | boolean
  /** The whole field (key, length, KeyValue) as written for `value`, once it came twice in a row. */
  field: Buffer | undefined
}

/**
 * The span attributes whose value is the one the previous span had for that key (the method, scheme, route,
 * service, client of a run of like requests), copied as the bytes written the time before instead of encoded
 * again. A key's value is remembered when it changes, its bytes kept the second time it comes in a row: a value
 * that changes with every span (a path with an id) costs a comparison, no copy.
 */
export class RepeatedAttributes {
  readonly #keys = new Map<string, Remembered>()
  #keeping: Remembered | undefined

  /**
   * Copies the field of `key` and `value` (not an object) when it is the one written last time. False: the caller
   * writes it from `start`, then calls `written`.
   */
  copied (writer: ProtoWriter, key: string, value: string | number | boolean): boolean {
    this.#keeping = undefined
    const remembered = this.#keys.get(key)
    if (remembered === undefined) {
      if (this.#keys.size < MAX_KEYS) this.#keys.set(key, { value, field: undefined })
      return false
    }
    // NaN is never equal to itself: written each time, correct either way.
    if (remembered.value !== value) {
      remembered.value = value
      remembered.field = undefined
      return false
    }
    if (remembered.field === undefined) {
      this.#keeping = remembered
      return false
    }
    writer.copy(remembered.field)
    return true
  }

  /** After a field `copied` did not copy was written from `start`: its bytes are kept when its value came twice. */
  written (writer: ProtoWriter, start: number): void {
    if (this.#keeping === undefined) return
    this.#keeping.field = Buffer.from(writer.buf.subarray(start, writer.pos))
    this.#keeping = undefined
  }
}
