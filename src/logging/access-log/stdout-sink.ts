import { stdoutDestination } from '../log-destination.js'
import type { AccessLogSink, SinkHooks } from './sink.js'

/**
 * Access lines on standard output, through the writer the log lines use (log-destination.ts's stdoutDestination):
 * never blocking, the two never interleaved mid-line. A line that would take what the writer holds past the
 * sink's `bufferBytes` (a pipe nobody reads) is dropped and counted as the sink's, not as a dropped log line.
 */
export function createStdoutSink (name: string, bufferBytes: number, hooks: SinkHooks): AccessLogSink {
  const out = stdoutDestination()
  let closed = false
  return {
    name,
    write (line) {
      if (closed || !out.writeWithin(line, bufferBytes)) hooks.onDropped(name, 1)
    },
    reopen () {},
    async close (timeoutMs) {
      closed = true
      await out.flush(timeoutMs)
    },
  }
}
