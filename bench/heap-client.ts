import { askPreload } from './preload-socket.js'

/**
 * How the orchestrator reads a Node server's heap allocation (bench/heap-preload.ts): the preload listens on the
 * Unix socket this variable names and answers each connection with one JSON line, `{"allocatedBytes": n}`.
 */
export const HEAP_SOCKET_ENV = 'LANEGATE_BENCH_HEAP_SOCKET'

/** The bytes a server's JS heap allocated since it started, from its heap preload; rejects after `timeoutMs`. */
export async function askAllocatedBytes (socketPath: string, timeoutMs = 5000): Promise<number> {
  const answer = await askPreload('heap preload', socketPath, undefined, timeoutMs) as { allocatedBytes?: unknown }
  if (typeof answer.allocatedBytes !== 'number') throw new Error(`heap preload at ${socketPath} answered ${JSON.stringify(answer)}`)
  return answer.allocatedBytes
}
