import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

/** A local HTTP server answering every request with a JSON body and counting hits (JWKS and jku targets). */
export interface CountingServer {
  readonly url: string
  hits (): number
  close (): Promise<void>
}

export async function countingJsonServer (body: () => unknown): Promise<CountingServer> {
  let count = 0
  const server: Server = createServer((_req, res) => {
    count += 1
    res.setHeader('content-type', 'application/json')
    res.end(JSON.stringify(body()))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  let closed = false
  return {
    url: `http://127.0.0.1:${port}/jwks.json`,
    hits: () => count,
    close: async () => {
      if (closed) return
      closed = true
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
