import { readFileSync } from 'node:fs'
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import type { TLSSocket } from 'node:tls'
import { WebSocketServer, type WebSocket } from 'ws'

interface Teardown {
  teardown (fn: () => unknown): void
}

/** A WebSocket backend on port 0 (the `ws` package), as a proxied service or a lane would run one. */
export interface WsBackend {
  url: string
  /** The handshakes it received, in order: URL and headers (and, over TLS, the client certificate's CN, '' without one). */
  handshakes: Array<{ url: string, headers: IncomingHttpHeaders, clientCn?: string }>
  /** Its side of each accepted connection, in order. */
  sockets: WebSocket[]
  /** Upgrades to `/held…` not yet answered: calling one answers it 101 (and the connection echoes). */
  held: Array<() => void>
  server: Server
}

/** Certificate files of a `wss` backend; with `clientCa` it requires a client certificate signed by it. */
export interface WsBackendTls {
  cert: string
  key: string
  clientCa?: string
}

/**
 * Paths: `/refuse…` answers the upgrade 403 with a JSON body; `/held…` answers it only when the test calls its entry
 * of `held` (a handshake kept under way); `/silent…` accepts and never sends; `/push…` sends
 * `event 1` at once and `event 2` when the client sends `next`; anything else echoes every message as it came
 * (text stays text, binary stays binary). Plain GETs answer 200 `plain <url>`. The subprotocol `chat.v2` is chosen
 * when offered. With `tls` it is a `wss` backend (`url` is then https://…).
 */
export async function startWsBackend (t: Teardown, maxPayload = 64 * 1024 * 1024, tls?: WsBackendTls): Promise<WsBackend> {
  const handshakes: WsBackend['handshakes'] = []
  const sockets: WebSocket[] = []
  const held: Array<() => void> = []
  const plain = (req: IncomingMessage, res: ServerResponse): void => {
    res.writeHead(200, { 'content-type': 'text/plain' })
    res.end(`plain ${req.url ?? ''}`)
  }
  const server: Server = tls === undefined
    ? createServer(plain)
    : createHttpsServer({
      cert: readFileSync(tls.cert),
      key: readFileSync(tls.key),
      ...(tls.clientCa === undefined ? {} : { ca: readFileSync(tls.clientCa), requestCert: true, rejectUnauthorized: true }),
    }, plain)
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload,
    handleProtocols: (offered) => offered.has('chat.v2') ? 'chat.v2' : false,
  })
  server.on('upgrade', (req, socket, head) => {
    if (tls === undefined) handshakes.push({ url: req.url ?? '', headers: req.headers })
    else {
      const peer = (req.socket as TLSSocket).getPeerCertificate()
      handshakes.push({ url: req.url ?? '', headers: req.headers, clientCn: typeof peer?.subject?.CN === 'string' ? peer.subject.CN : '' })
    }
    if ((req.url ?? '').includes('/refuse')) {
      const body = '{"error":"not for you"}'
      socket.end(`HTTP/1.1 403 Forbidden\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`)
      return
    }
    const accept = (): void => { wss.handleUpgrade(req, socket, head, (ws) => {
      sockets.push(ws)
      const url = req.url ?? ''
      if (url.includes('/silent')) return
      if (url.includes('/push')) {
        ws.send('event 1')
        ws.on('message', () => { ws.send('event 2') })
        return
      }
      ws.on('message', (data, isBinary) => { ws.send(data, { binary: isBinary }) })
    }) }
    if ((req.url ?? '').includes('/held')) held.push(accept)
    else accept()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  t.teardown(async () => {
    for (const ws of sockets) ws.terminate()
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })
  return { url: `${tls === undefined ? 'http' : 'https'}://127.0.0.1:${port}`, handshakes, sockets, held, server }
}
