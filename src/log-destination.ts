import { write } from 'node:fs'
import type { DestinationStream } from 'pino'

/** A log destination that never blocks the event loop, and can be flushed (with a deadline) before exiting. */
export interface AsyncLogDestination extends DestinationStream {
  /** Resolves once everything written so far reached the file descriptor, or after `timeoutMs`, whichever first. */
  flush (timeoutMs: number): Promise<void>
  /** Lines dropped because the buffer was full (the reader stopped reading). */
  readonly dropped: number
}

/** How long to wait before writing again when a non-blocking descriptor is full (EAGAIN). */
const RETRY_MS = 20

/**
 * Writes log lines to `fd` with asynchronous `fs.write` (libuv's thread pool), holding at most `maxBufferedBytes`
 * meanwhile and dropping lines beyond that. Why not pino's default: it writes stdout synchronously, and when
 * stdout is a pipe nobody reads (a stalled log shipper) a synchronous write blocks the event loop for good, so the
 * gateway could neither finish a drain nor act on a second signal (issue 15). Here a full pipe costs at most one
 * blocked thread-pool thread and some dropped lines; `process.exit` still ends the process. And unlike pino's own
 * asynchronous destination, nothing flushes synchronously at exit (that flush spins forever on a full pipe).
 */
export function createAsyncLogDestination (fd = 1, maxBufferedBytes = 8 * 1024 * 1024): AsyncLogDestination {
  let queued: string[] = []
  let queuedBytes = 0
  let writing: Buffer | undefined
  let dropped = 0
  const waiters: (() => void)[] = []

  function settleWaiters (): void {
    if (writing !== undefined || queued.length > 0) return
    for (const wake of waiters.splice(0)) wake()
  }

  function pump (): void {
    if (writing === undefined) {
      if (queued.length === 0) return settleWaiters()
      writing = Buffer.from(queued.join(''), 'utf8')
      queued = []
      queuedBytes = 0
    }
    const chunk = writing
    write(fd, chunk, 0, chunk.length, null, function written (error, n) {
      if (error !== null) {
        const code = (error as NodeJS.ErrnoException).code
        if (code === 'EAGAIN' || code === 'EBUSY') {
          setTimeout(pump, RETRY_MS).unref()
          return
        }
        // EPIPE or a closed descriptor: nobody will read these lines; forget them rather than retry forever.
        dropped += 1
        writing = undefined
        pump()
        return
      }
      writing = n < chunk.length ? chunk.subarray(n) : undefined
      pump()
    })
  }

  return {
    write (line: string) {
      if (queuedBytes + line.length > maxBufferedBytes) {
        dropped += 1
        return
      }
      queued.push(line)
      queuedBytes += line.length
      if (writing === undefined && queued.length === 1) pump()
    },
    flush (timeoutMs: number) {
      if (writing === undefined && queued.length === 0) return Promise.resolve()
      return new Promise<void>((resolve) => {
        // Not unref'd: a flush is bounded by its timeout, and the caller's exit code comes after it.
        const timer = setTimeout(resolve, timeoutMs)
        waiters.push(() => { clearTimeout(timer); resolve() })
      })
    },
    get dropped () { return dropped },
  }
}
