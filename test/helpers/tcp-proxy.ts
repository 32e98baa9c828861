import { connect, createServer, type Server, type Socket } from 'node:net'

/**
 * A TCP relay on `port` to `target`: `close()` cuts every relayed connection and stops accepting (a cut network
 * path), `open()` accepts again on the same port.
 */
export class TcpProxy {
  private server: Server | undefined
  private readonly sockets = new Set<Socket>()
  constructor (readonly port: number, private readonly target: { host: string, port: number }) {}

  async open (): Promise<void> {
    this.server = createServer((client) => {
      const upstream = connect(this.target.port, this.target.host)
      for (const s of [client, upstream]) {
        this.sockets.add(s)
        s.on('close', () => this.sockets.delete(s))
        s.on('error', () => { client.destroy(); upstream.destroy() })
      }
      client.pipe(upstream).pipe(client)
    })
    await new Promise<void>((resolve) => this.server?.listen(this.port, '127.0.0.1', resolve))
  }

  async close (): Promise<void> {
    for (const s of this.sockets) s.destroy()
    await new Promise<void>((resolve) => { if (this.server === undefined) resolve(); else this.server.close(() => resolve()) })
    this.server = undefined
  }
}
