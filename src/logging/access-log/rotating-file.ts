import { open, rename, stat, type FileHandle } from 'node:fs/promises'

/** Where the file is and when it rotates. */
export interface RotationSettings {
  /** Absolute path of the file lines are appended to. */
  readonly path: string
  /** Rotate before a line would take the file past this many bytes. */
  readonly maxBytes: number | undefined
  /** Rotate when the UTC day of a line differs from the day the file was started on. */
  readonly daily: boolean
  /** Rotated files kept: `path.1` (newest) to `path.<keep>`. */
  readonly keep: number
  /** The clock (tests move the day). */
  readonly now: () => number
}

/** Lines to append as one write, after a rotation when `rotateFirst` (a batch of no line only rotates). */
export interface Batch {
  readonly text: string
  readonly bytes: number
  readonly lines: number
  readonly rotateFirst: boolean
}

const DAY_MS = 86_400_000

/**
 * An access-log file: opened (for appending) by the first write after a start, a rotation or `close`, its size and
 * day tracked, rotated between lines: the file is closed, `path.N` becomes `path.N+1` (the oldest kept one is
 * overwritten), `path` becomes `path.1`, and the next write opens a new `path`.
 */
export class RotatingFile {
  #handle: FileHandle | undefined
  #size = 0
  #day = 0

  constructor (private readonly settings: RotationSettings) {}

  /** The first lines of `queue` to write as one chunk: as many as fit before the file must rotate (at least one). */
  batchOf (queue: readonly string[]): Batch {
    const { maxBytes, daily, now } = this.settings
    const rotateForDay = daily && this.#size > 0 && Math.floor(now() / DAY_MS) !== this.#day
    const room = maxBytes === undefined ? Infinity : maxBytes - (rotateForDay ? 0 : this.#size)
    let bytes = 0
    let lines = 0
    for (const line of queue) {
      const lineBytes = Buffer.byteLength(line)
      if (lines > 0 && bytes + lineBytes > room) break
      if (lines === 0 && lineBytes > room && this.#size > 0 && !rotateForDay) return { text: '', bytes: 0, lines: 0, rotateFirst: true }
      bytes += lineBytes
      lines++
    }
    return { text: queue.slice(0, lines).join(''), bytes, lines, rotateFirst: rotateForDay }
  }

  /** Rotates first if the batch says so, then appends its lines. */
  async write (batch: Batch): Promise<void> {
    if (batch.rotateFirst) await this.#rotate()
    if (batch.lines === 0) return
    this.#handle ??= await this.#open()
    await this.#handle.write(batch.text)
    this.#size += batch.bytes
  }

  /** Closes the file; the next write opens `path` again (a new file there after an outside logrotate moved it). */
  async close (): Promise<void> {
    const closing = this.#handle
    this.#handle = undefined
    await closing?.close()
  }

  async #open (): Promise<FileHandle> {
    const opened = await open(this.settings.path, 'a')
    const info = await opened.stat()
    this.#size = info.size
    // A file kept from before a restart belongs to the day it was last written.
    this.#day = Math.floor((info.size > 0 ? info.mtimeMs : this.settings.now()) / DAY_MS)
    return opened
  }

  async #rotate (): Promise<void> {
    const { path, keep } = this.settings
    await this.close()
    for (let n = keep - 1; n >= 1; n--) await renameIfThere(`${path}.${n}`, `${path}.${n + 1}`)
    await renameIfThere(path, `${path}.1`)
    // The next line opens a new, empty file at `path`.
    this.#size = 0
  }
}

async function renameIfThere (from: string, to: string): Promise<void> {
  try {
    await stat(from)
  } catch {
    return
  }
  await rename(from, to)
}
