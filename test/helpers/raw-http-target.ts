import { createServer, type Socket } from 'node:net'

/** A raw TCP target for a gateway's proxy service: what a misbehaving HTTP server writes, byte for byte. */
export interface RawHttpTarget {
  port: number
  /** Sockets open now (a leak check: the gateway's pool should not hold more than it keeps alive). */
  open: () => number
  close: () => Promise<void>
}

/**
 * Listens on 127.0.0.1 and, for every request head it reads (the body is not read), hands the request path and the
 * socket to `answer`, which writes whatever the case needs (or nothing). `/health` answers `200 ok`, so the
 * gateway's active health checks keep the target in. Used where no HTTP library would write the answer the
 * case needs: a silent body, a reset mid-body, a trickled head, something that is not HTTP.
 */
export async function rawHttpTarget (answer: (path: string, socket: Socket) => void): Promise<RawHttpTarget> {
  const sockets = new Set<Socket>()
  const server = createServer((socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => {})
    let head = ''
    socket.on('data', (chunk: Buffer) => {
      head += chunk.toString('latin1')
      if (!head.includes('\r\n\r\n')) return
      const path = head.split(' ')[1] ?? ''
      head = ''
      if (path.endsWith('/health')) socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok')
      else answer(path, socket)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as { port: number }).port,
    open: () => sockets.size,
    close: async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}
