import { rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { PerformanceObserver, performance } from 'node:perf_hooks'
import { GC_SOCKET_ENV, type GcWindowRequest } from './gc-protocol.js'
import { GcRing } from './gc-ring.js'
import { monotonicMs } from './mono-clock.js'

/*
 * Preloaded into the bench's Node servers of the latency scenario (`node --import <this file>`, see servers.ts):
 * keeps every GC pause of the process in a ring and hands those of a time window to the orchestrator on request,
 * over a Unix socket at $LANEGATE_BENCH_GC_SOCKET (bench/gc-protocol.ts); the connection closes after each answer.
 *
 * Between GCs it costs nothing: the observer runs only when V8 reports a pause, the listener is idle and unref'd
 * (the process exits as if it were not there). Without the variable it does nothing at all.
 */

const socketPath = process.env[GC_SOCKET_ENV]
if (socketPath !== undefined && socketPath !== '') {
  // Nothing the server starts should answer on this socket too.
  delete process.env[GC_SOCKET_ENV]
  // perf_hooks times count from this process's start on the same monotonic clock: one offset moves them onto the
  // machine-wide count the load generator uses.
  const offset = monotonicMs() - performance.now()
  const ring = new GcRing()
  const observer = new PerformanceObserver(function recordPauses (list) {
    for (const entry of list.getEntries()) {
      ring.push(entry.startTime + offset, entry.duration, (entry as { detail?: { kind?: number } }).detail?.kind ?? 0)
    }
  })
  observer.observe({ entryTypes: ['gc'] })
  rmSync(socketPath, { force: true })
  const server = createServer(function answerWindow (socket) {
    let text = ''
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => {
      text += chunk
      const end = text.indexOf('\n')
      if (end === -1) return
      try {
        const { fromMs, toMs } = JSON.parse(text.slice(0, end)) as GcWindowRequest
        socket.end(JSON.stringify(ring.window(fromMs, toMs)) + '\n')
      } catch (error) {
        socket.end(JSON.stringify({ error: (error as Error).message }) + '\n')
      }
    })
    socket.on('error', () => socket.destroy())
  })
  server.listen(socketPath)
  server.unref()
}
