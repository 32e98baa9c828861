import { RotatingFile } from './rotating-file.js'
import { DEFAULT_BUFFER_BYTES, FailurePeriod, type AccessLogSink, type SinkHooks } from './sink.js'

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

/**
 * An access-log file with rotation (rotating-file.ts): lines are queued in memory (at most `bufferBytes`; past that
 * they are dropped and counted) and appended by one writer loop with `fs` promises, so a slow or full disk holds the
 * loop's thread-pool write, never the event loop. `reopen()` (SIGUSR1) closes the file before the next write, so
 * lines after it go to a new file at `path` once an outside logrotate moved it.
 */
export function createFileSink (options: FileSinkOptions, hooks: SinkHooks): AccessLogSink {
  const { name } = options
  const bufferBytes = options.bufferBytes ?? DEFAULT_BUFFER_BYTES
  const file = new RotatingFile({ path: options.path, maxBytes: options.maxBytes, daily: options.daily === true, keep: options.keep ?? 7, now: options.now ?? Date.now })
  let queue: string[] = []
  let queuedBytes = 0
  let reopenAsked = false
  let running: Promise<void> | undefined
  let closed = false
  const failures = new FailurePeriod(hooks, name)

  const dropped = (lines: number): void => { if (lines > 0) hooks.onDropped(name, lines) }

  /** Writes the first batch of the queue; a failed one's lines are lost (a full disk, a removed folder). */
  async function writeBatch (): Promise<void> {
    const batch = file.batchOf(queue)
    // A rotation that fails gives up the line it was for, so a rotation that keeps failing never spins.
    let taken = batch.lines
    try {
      await file.write(batch)
      failures.recovered()
    } catch (error) {
      failures.failed(error)
      taken = Math.max(taken, 1)
      dropped(taken)
      // The next batch tries a new file.
      await file.close().catch(() => {})
    }
    for (const line of queue.splice(0, taken)) queuedBytes -= line.length
  }

  async function writeQueued (): Promise<void> {
    while (queue.length > 0 || reopenAsked) {
      if (reopenAsked) {
        reopenAsked = false
        await file.close().catch((error: unknown) => { failures.failed(error) })
      } else {
        await writeBatch()
      }
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
      await file.close().catch(() => {})
    },
  }
}
