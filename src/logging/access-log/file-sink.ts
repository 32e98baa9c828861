import { open, rename, stat, type FileHandle } from 'node:fs/promises'
import { DEFAULT_BUFFER_BYTES, type AccessLogSink, type SinkHooks } from './sink.js'

export interface FileSinkOptions {
  name: string
  /** Absolute path of the file lines are appended to. */
  path: string
  /** Rotate before a line would take the file past this many bytes. */
  maxBytes?: number
  /** Rotate when the UTC day of a line differs from the day the file was started on. */
  daily?: boolean
  /** Rotated files kept: `path.1` (newest) to `path.<keep>`. */
  keep?: number
  bufferBytes?: number
  /** The clock (tests move the day); default Date.now. */
  now?: () => number
}

const DAY_MS = 86_400_000

/**
 * An access-log file with rotation: lines are queued in memory (at most `bufferBytes`; past that they are dropped
 * and counted) and appended by one writer loop with `fs` promises, so a slow or full disk holds the loop's thread-pool
 * write, never the event loop. Rotation happens between lines: the file is closed, `path.N` becomes `path.N+1` (the
 * oldest kept one is overwritten), `path` becomes `path.1`, and a new `path` is opened. `reopen()` (SIGUSR1) closes
 * the file before the next write, so lines after it go to a new file at `path` once an outside logrotate moved it.
 */
export function createFileSink (options: FileSinkOptions, hooks: SinkHooks): AccessLogSink {
  const { name, path } = options
  const bufferBytes = options.bufferBytes ?? DEFAULT_BUFFER_BYTES
  const keep = options.keep ?? 7
  const now = options.now ?? Date.now
  let queue: string[] = []
  let queuedBytes = 0
  let handle: FileHandle | undefined
  let size = 0
  let day = 0
  let reopenAsked = false
  let running: Promise<void> | undefined
  let closed = false
  let failing = false

  function dropped (lines: number): void {
    if (lines > 0) hooks.onDropped(name, lines)
  }

  function failed (error: unknown): void {
    if (!failing) hooks.onFailure(name, error)
    failing = true
  }

  async function openFile (): Promise<FileHandle> {
    const opened = await open(path, 'a')
    const info = await opened.stat()
    size = info.size
    // A file kept from before a restart belongs to the day it was last written.
    day = Math.floor((info.size > 0 ? info.mtimeMs : now()) / DAY_MS)
    return opened
  }

  async function closeFile (): Promise<void> {
    const closing = handle
    handle = undefined
    await closing?.close()
  }

  async function rotate (): Promise<void> {
    await closeFile()
    for (let n = keep - 1; n >= 1; n--) await renameIfThere(`${path}.${n}`, `${path}.${n + 1}`)
    await renameIfThere(path, `${path}.1`)
    // The next line opens a new, empty file at `path`.
    size = 0
  }

  /** The next lines to write as one chunk: as many as fit before the file must rotate (at least one). */
  function takeBatch (): { text: string, bytes: number, lines: number, rotateFirst: boolean } {
    const today = Math.floor(now() / DAY_MS)
    const rotateForDay = options.daily === true && size > 0 && today !== day
    const room = options.maxBytes === undefined ? Infinity : options.maxBytes - (rotateForDay ? 0 : size)
    let bytes = 0
    let lines = 0
    for (const line of queue) {
      const lineBytes = Buffer.byteLength(line)
      if (lines > 0 && bytes + lineBytes > room) break
      if (lines === 0 && lineBytes > room && size > 0 && !rotateForDay) return { text: '', bytes: 0, lines: 0, rotateFirst: true }
      bytes += lineBytes
      lines++
    }
    const text = queue.slice(0, lines).join('')
    return { text, bytes, lines, rotateFirst: rotateForDay }
  }

  async function writeQueued (): Promise<void> {
    while (queue.length > 0 || reopenAsked) {
      if (reopenAsked) {
        reopenAsked = false
        await closeFile().catch(failed)
        continue
      }
      const batch = takeBatch()
      try {
        if (batch.rotateFirst) {
          await rotate()
          if (batch.lines === 0) continue
        }
        handle ??= await openFile()
        await handle.write(batch.text)
        size += batch.bytes
        failing = false
      } catch (error) {
        // The lines of a failed write are lost (a full disk, a removed folder); the next batch tries a new file.
        failed(error)
        dropped(batch.lines)
        await closeFile().catch(() => {})
      }
      queue.splice(0, batch.lines)
      queuedBytes -= batch.text.length
    }
  }

  function kick (): void {
    running ??= writeQueued().finally(() => {
      running = undefined
      if (queue.length > 0 || reopenAsked) kick()
    })
  }

  return {
    name,
    write (line) {
      if (closed || queuedBytes + line.length > bufferBytes) {
        dropped(1)
        return
      }
      queue.push(line)
      queuedBytes += line.length
      kick()
    },
    reopen () {
      reopenAsked = true
      kick()
    },
    async close (timeoutMs) {
      closed = true
      if (running !== undefined) await Promise.race([running, new Promise((resolve) => setTimeout(resolve, timeoutMs).unref())])
      dropped(queue.length)
      queue = []
      queuedBytes = 0
      await closeFile().catch(() => {})
    },
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
