import { fstatSync, write } from 'node:fs'
import { Socket } from 'node:net'
import type { DestinationStream } from 'pino'

/** A log destination that never blocks the event loop, and can be flushed (with a deadline) before exiting. */
export interface AsyncLogDestination extends DestinationStream {
  /** Resolves once everything written so far reached the file descriptor, or after `timeoutMs`, whichever first. */
  flush (timeoutMs: number): Promise<void>
  /** Lines dropped because the buffer was full (the reader stopped reading), since the destination was made. */
  readonly dropped: number
  /**
   * Calls `listener` each time the destination has written out everything it held after it had to drop lines,
   * with how many it dropped since the previous call: the moment a line saying so can be written again.
   */
  onDrained (listener: (droppedLines: number) => void): void
  /**
   * Writes `line` if what the destination holds stays within `maxBufferedBytes` (and its own bound), else returns
   * false: another writer's line (an access-log sink sharing stdout) with its own bound, counted by that writer and
   * not as a dropped log line.
   */
  writeWithin (line: string, maxBufferedBytes: number): boolean
}

/**
 * The drop count of one destination and when to tell about it: drops are counted at once (the metric reads
 * `total`), and reported to the listeners once the destination has drained (`drained()`).
 */
class DropCount {
  total = 0
  #reported = 0
  readonly #listeners: ((droppedLines: number) => void)[] = []

  listen (listener: (droppedLines: number) => void): void {
    this.#listeners.push(listener)
  }

  /** Everything held was written: report the lines dropped since the last report, if any. */
  drained (): void {
    const unreported = this.total - this.#reported
    if (unreported === 0) return
    this.#reported = this.total
    for (const listener of this.#listeners) listener(unreported)
  }
}

/** How long to wait before writing again when a non-blocking descriptor is full (EAGAIN). */
const RETRY_MS = 20

/**
 * The gateway's log destination on `fd`, holding at most `maxBufferedBytes` while the reader lags and dropping
 * (and counting) lines beyond that. Why not pino's default: it writes stdout synchronously, and when stdout is a
 * pipe nobody reads (a stalled log shipper) a synchronous write blocks the event loop for good, so the gateway
 * could neither finish a drain nor act on a second signal. And unlike pino's own asynchronous
 * destination, nothing flushes synchronously at exit (that flush spins forever on a full pipe).
 *
 * A pipe or socket (what child_process.spawn gives a child) is written through a non-blocking libuv stream: a
 * blocking descriptor written from the thread pool left a thread stuck in write() once the reader stalled, and
 * the process's exit waits for every thread-pool thread, so SIGTERM never ended the process. A file or
 * terminal is written with `fs.write` from the thread pool (a disk write does not wait on a reader).
 */
export function createAsyncLogDestination (fd = 1, maxBufferedBytes = 8 * 1024 * 1024): AsyncLogDestination {
  return isPipeOrSocket(fd) ? streamDestination(fd, maxBufferedBytes) : threadPoolDestination(fd, maxBufferedBytes)
}

let stdout: AsyncLogDestination | undefined

/**
 * The process's one destination on standard output (made on first use): the logger's and the access log's
 * stdout sink's lines go through the same writer, so they never interleave mid-line and share one bound.
 */
export function stdoutDestination (): AsyncLogDestination {
  stdout ??= createAsyncLogDestination(1)
  return stdout
}

function isPipeOrSocket (fd: number): boolean {
  try {
    const stat = fstatSync(fd)
    return stat.isFIFO() || stat.isSocket()
  } catch {
    return false
  }
}

/** How often a flush looks whether the stream's queue is empty. */
const FLUSH_POLL_MS = 10

/**
 * Through libuv's stream on the descriptor, which makes it non-blocking (O_NONBLOCK) and waits for writability
 * in the event loop, never in a thread. For fd 1 and 2 that is Node's own process.stdout/stderr (one handle per
 * descriptor: a second libuv watcher on the same descriptor would never be woken).
 */
function streamDestination (fd: number, maxBufferedBytes: number): AsyncLogDestination {
  // unref: lines a stalled reader never takes must not keep an otherwise finished process alive.
  const stream = fd === 1 ? process.stdout : fd === 2 ? process.stderr : new Socket({ fd, readable: false, writable: true }).unref()
  const drops = new DropCount()
  let broken = false
  // EPIPE (the reader closed its end) would otherwise be an unhandled 'error' event, i.e. a crash.
  stream.on('error', function logStreamFailed () { broken = true })
  // A line is dropped only past `maxBufferedBytes` (MiBs), far above the stream's high-water mark, so the write
  // that filled the buffer returned false and 'drain' follows once the reader took everything.
  stream.on('drain', function logStreamDrained () { drops.drained() })
  function writeWithin (line: string, limit: number): boolean {
    if (broken || stream.writableLength + line.length > Math.min(limit, maxBufferedBytes)) return false
    stream.write(line)
    return true
  }
  return {
    write (line: string) {
      if (!writeWithin(line, maxBufferedBytes)) drops.total += 1
    },
    writeWithin,
    flush (timeoutMs: number) {
      const deadline = Date.now() + timeoutMs
      return new Promise<void>((resolve) => {
        // Not unref'd: a flush is bounded by its deadline, and the caller's exit code comes after it.
        function check (): void {
          if (broken || stream.writableLength === 0 || Date.now() >= deadline) resolve()
          else setTimeout(check, FLUSH_POLL_MS)
        }
        check()
      })
    },
    get dropped () { return drops.total },
    onDrained (listener) { drops.listen(listener) },
  }
}

/** With `fs.write` from libuv's thread pool: for files and terminals. */
function threadPoolDestination (fd: number, maxBufferedBytes: number): AsyncLogDestination {
  let queued: string[] = []
  let queuedBytes = 0
  let writing: Buffer | undefined
  const drops = new DropCount()
  // Whether the last write failed (EPIPE, a closed descriptor, a full disk): its drops are told of after a later
  // write succeeds, never right away, where the line telling of them would fail and be told of, forever.
  let lastWriteFailed = false
  const waiters: (() => void)[] = []

  function settleWaiters (): void {
    if (writing !== undefined || queued.length > 0) return
    for (const wake of waiters.splice(0)) wake()
    if (!lastWriteFailed) drops.drained()
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
        lastWriteFailed = true
        drops.total += linesIn(chunk)
        writing = undefined
        pump()
        return
      }
      lastWriteFailed = false
      writing = n < chunk.length ? chunk.subarray(n) : undefined
      pump()
    })
  }

  function writeWithin (line: string, limit: number): boolean {
    if (queuedBytes + line.length > Math.min(limit, maxBufferedBytes)) return false
    queued.push(line)
    queuedBytes += line.length
    if (writing === undefined && queued.length === 1) pump()
    return true
  }

  return {
    write (line: string) {
      if (!writeWithin(line, maxBufferedBytes)) drops.total += 1
    },
    writeWithin,
    flush (timeoutMs: number) {
      if (writing === undefined && queued.length === 0) return Promise.resolve()
      return new Promise<void>((resolve) => {
        // Not unref'd: a flush is bounded by its timeout, and the caller's exit code comes after it.
        const timer = setTimeout(resolve, timeoutMs)
        waiters.push(() => { clearTimeout(timer); resolve() })
      })
    },
    get dropped () { return drops.total },
    onDrained (listener) { drops.listen(listener) },
  }
}

/** How many lines (newline-ended, as pino writes them) a chunk holds; at least one. */
function linesIn (chunk: Buffer): number {
  let lines = 0
  for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines++
  return Math.max(lines, 1)
}
