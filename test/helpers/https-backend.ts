import { readFileSync } from 'node:fs'
import { createServer, type ServerOptions } from 'node:https'
import type { AddressInfo } from 'node:net'
import type { TLSSocket } from 'node:tls'

interface Teardown { teardown (fn: () => unknown): void }

export interface HttpsBackend {
  url: string
  port: number
  /** What each request came with: method, url, the client certificate's CN ('' without one), its headers. */
  seen: Array<{ method: string, url: string, clientCn: string, headers: Record<string, string | string[] | undefined> }>
}

/**
 * An HTTPS backend on port 0 with `cert`/`key` files; with `clientCa` it requires a client certificate signed by
 * it (the handshake fails without). Answers 200 JSON `{ backend: name, url, client_cn }`.
 */
export async function startHttpsBackend (t: Teardown, name: string, files: { cert: string, key: string, clientCa?: string }): Promise<HttpsBackend> {
  const options: ServerOptions = { cert: readFileSync(files.cert), key: readFileSync(files.key) }
  if (files.clientCa !== undefined) Object.assign(options, { ca: readFileSync(files.clientCa), requestCert: true, rejectUnauthorized: true })
  const seen: HttpsBackend['seen'] = []
  const server = createServer(options, (req, res) => {
    const peer = (req.socket as TLSSocket).getPeerCertificate()
    const clientCn = typeof peer?.subject?.CN === 'string' ? peer.subject.CN : ''
    seen.push({ method: req.method ?? '', url: req.url ?? '', clientCn, headers: req.headers })
    req.resume()
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ backend: name, url: req.url, client_cn: clientCn }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
  const port = (server.address() as AddressInfo).port
  return { url: `https://127.0.0.1:${port}`, port, seen }
}
