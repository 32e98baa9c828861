import { rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { GCProfiler, getHeapStatistics } from 'node:v8'
import { HEAP_SOCKET_ENV } from './heap-client.js'

/*
 * Preloaded into the bench's Node servers (`node --import <this file>`, see servers.ts): counts the bytes the JS
 * heap allocated, which V8 reports nowhere cumulatively. What a GC freed is its heap's used size before it less
 * after it (node's GCProfiler records both for every GC); allocated so far = freed so far + used now. The
 * orchestrator asks before and after a run over a Unix socket at $LANEGATE_BENCH_HEAP_SOCKET; the difference over
 * the run's responses is its heap bytes per request. Between questions it costs one record per GC.
 */

const socketPath = process.env[HEAP_SOCKET_ENV]
if (socketPath !== undefined && socketPath !== '') {
  delete process.env[HEAP_SOCKET_ENV]
  let freed = 0
  let profiler = new GCProfiler()
  profiler.start()
  const allocatedSoFar = (): number => {
    for (const gc of profiler.stop().statistics) freed += gc.beforeGC.heapStatistics.usedHeapSize - gc.afterGC.heapStatistics.usedHeapSize
    profiler = new GCProfiler()
    profiler.start()
    return freed + getHeapStatistics().used_heap_size
  }
  rmSync(socketPath, { force: true })
  const server = createServer(function answerAllocated (socket) {
    socket.on('error', () => socket.destroy())
    socket.end(JSON.stringify({ allocatedBytes: allocatedSoFar() }) + '\n')
  })
  server.listen(socketPath)
  server.unref()
}
