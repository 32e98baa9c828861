import { connect } from 'node:net'

/**
 * How the orchestrator reads a Node server's heap allocation (bench/heap-preload.ts): the preload listens on the
 * Unix socket this variable names and answers each connection with one JSON line, `{"allocatedBytes": n}`.
 */
export const HEAP_SOCKET_ENV = 'LANEGATE_BENCH_HEAP_SOCKET'

/** The bytes a server's JS heap allocated since it started, from its heap preload; rejects after `timeoutMs`. */
export function askAllocatedBytes (socketPath: string, timeoutMs = 5000): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath)
    let text = ''
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new Error(`no answer from the heap preload at ${socketPath} within ${timeoutMs} ms`))
    }, timeoutMs)
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => { text += chunk })
    socket.on('end', () => {
      clearTimeout(timer)
      const answer = JSON.parse(text === '' ? '{}' : text) as { allocatedBytes?: number }
      if (typeof answer.allocatedBytes === 'number') resolve(answer.allocatedBytes)
      else reject(new Error(`heap preload at ${socketPath} answered ${JSON.stringify(text)}`))
    })
    socket.on('error', (error) => {
      clearTimeout(timer)
      reject(new Error(`heap preload at ${socketPath}: ${error.message}`))
    })
  })
}
