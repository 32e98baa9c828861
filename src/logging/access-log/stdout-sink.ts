import { createAsyncLogDestination, type AsyncLogDestination } from '../log-destination.js'
import type { AccessLogSink, SinkHooks } from './sink.js'

/**
 * The process's non-blocking stdout destinations by buffer size: made once and shared by every stdout sink (and every
 * reload) with that size, since each one registers its own listeners on process.stdout.
 */
const destinations = new Map<number, AsyncLogDestination>()

/**
 * Access lines on standard output, beside the log lines, through the same non-blocking destination the logger uses
 * (log-destination.ts): a pipe nobody reads fills the buffer, then lines are dropped and counted.
 */
export function createStdoutSink (name: string, bufferBytes: number, hooks: SinkHooks): AccessLogSink {
  let destination = destinations.get(bufferBytes)
  if (destination === undefined) {
    destination = createAsyncLogDestination(1, bufferBytes)
    destinations.set(bufferBytes, destination)
  }
  const out = destination
  let closed = false
  return {
    name,
    write (line) {
      if (closed) {
        hooks.onDropped(name, 1)
        return
      }
      const before = out.dropped
      out.write(line)
      if (out.dropped !== before) hooks.onDropped(name, out.dropped - before)
    },
    reopen () {},
    async close (timeoutMs) {
      closed = true
      await out.flush(timeoutMs)
    },
  }
}
