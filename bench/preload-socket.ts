import { connect } from 'node:net'

/**
 * One question to a server's preload over its Unix socket (the GC and heap preloads): `request` written as one JSON
 * line when given, the whole answer read to the socket's end and parsed. Rejects, naming `what` and the socket, when
 * the preload does not answer within `timeoutMs` (a server started without it, or one that died) or answers
 * something that is not JSON.
 */
export function askPreload (what: string, socketPath: string, request: unknown, timeoutMs: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath)
    let text = ''
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new Error(`no answer from the ${what} at ${socketPath} within ${timeoutMs} ms`))
    }, timeoutMs)
    socket.setEncoding('utf8')
    if (request !== undefined) socket.on('connect', () => socket.write(JSON.stringify(request) + '\n'))
    socket.on('data', (chunk: string) => { text += chunk })
    socket.on('end', () => {
      clearTimeout(timer)
      try {
        resolve(JSON.parse(text))
      } catch (error) {
        reject(new Error(`${what} at ${socketPath} answered ${JSON.stringify(text)}: ${(error as Error).message}`))
      }
    })
    socket.on('error', (error) => {
      clearTimeout(timer)
      reject(new Error(`${what} at ${socketPath}: ${error.message}`))
    })
  })
}
