import { rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { PerformanceObserver, performance } from 'node:perf_hooks'
import { getHeapSpaceStatistics } from 'node:v8'
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

/** How long an answer waits for pauses still being delivered to the observer. */
const ANSWER_DELAY_MS = 20

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
      let request: GcWindowRequest
      try {
        request = JSON.parse(text.slice(0, end)) as GcWindowRequest
      } catch (error) {
        socket.end(JSON.stringify({ error: (error as Error).message }) + '\n')
        return
      }
      // A pause reaches the observer a loop turn or two after it ended (a native immediate, then a JS one): when the
      // question arrives right after the run, the last pauses may still be on their way. A few ms let them land.
      setTimeout(function answer () {
        // Used plus available: what can be allocated between two scavenges now. Not `space_size`, the memory committed
        // to both semi-spaces, which V8 keeps when it shrinks the capacity of an idle process.
        const young = getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')
        const youngGenerationBytes = young === undefined ? undefined : young.space_used_size + young.space_available_size
        socket.end(JSON.stringify({ ...ring.window(request.fromMs, request.toMs), youngGenerationBytes }) + '\n')
      }, ANSWER_DELAY_MS)
    })
    socket.on('error', () => socket.destroy())
  })
  server.listen(socketPath)
  server.unref()
}
