import { appendFileSync } from 'node:fs'

/**
 * Preloaded into the soak's gateway (`NODE_OPTIONS=--expose-gc --import <this file>`, see soak.ts): on SIGUSR2 it
 * runs a full garbage collection and appends what is still alive, as one JSON line, to LANEGATE_HEAP_PROBE_FILE.
 * The soak judges leaks on these figures rather than on RSS: RSS is mostly V8's committed heap, which swings by tens
 * of MB with the collector's cycles (old space grows up to its next limit before a major GC, and pages are given
 * back lazily), so two RSS samples compare two points of that cycle, not two amounts of retained memory.
 */
export interface HeapProbeLine {
  /** V8 heap in use after a full GC, bytes. */
  heapUsed: number
  /** Memory of C++ objects bound to JS objects (Buffers among them) after that GC, bytes. */
  external: number
}

const file = process.env.LANEGATE_HEAP_PROBE_FILE
const gc = (globalThis as { gc?: () => void }).gc
if (file !== undefined) {
  // Without it the SIGUSR2 would find no handler and end the process: refuse to start instead.
  if (gc === undefined) throw new Error('heap-probe: node was started without --expose-gc')
  process.on('SIGUSR2', () => {
    gc?.()
    const { heapUsed, external } = process.memoryUsage()
    const line: HeapProbeLine = { heapUsed, external }
    appendFileSync(file, `${JSON.stringify(line)}\n`)
  })
}
