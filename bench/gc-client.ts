import { connect } from 'node:net'
import type { GcWindowPauses } from './gc-ring.js'
import type { GcWindowRequest } from './gc-protocol.js'

/**
 * Asks a server's GC preload (bench/gc-preload.ts) for the pauses of [fromMs, toMs] over its Unix socket. Rejects
 * when the preload does not answer within `timeoutMs` (a server started without it, or one that died).
 */
export function askGcPauses (socketPath: string, window: GcWindowRequest, timeoutMs = 5000): Promise<GcWindowPauses> {
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath)
    let text = ''
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new Error(`no answer from the GC preload at ${socketPath} within ${timeoutMs} ms`))
    }, timeoutMs)
    socket.setEncoding('utf8')
    socket.on('connect', () => socket.write(JSON.stringify(window) + '\n'))
    socket.on('data', (chunk: string) => { text += chunk })
    socket.on('end', () => {
      clearTimeout(timer)
      try {
        const answer = JSON.parse(text) as GcWindowPauses | { error: string }
        if ('error' in answer) reject(new Error(`GC preload at ${socketPath}: ${answer.error}`))
        else resolve(answer)
      } catch (error) {
        reject(new Error(`GC preload at ${socketPath} answered ${JSON.stringify(text)}: ${(error as Error).message}`))
      }
    })
    socket.on('error', (error) => {
      clearTimeout(timer)
      reject(new Error(`GC preload at ${socketPath}: ${error.message}`))
    })
  })
}
