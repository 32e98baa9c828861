import { connect } from 'node:net'
import t from 'tap'
import { configHead, gatewayOnConfig } from '../helpers/own-config-gateway.js'
import type { SpawnedGateway } from '../helpers/spawn-gateway.js'
import { startBackend, type Backend } from '../helpers/upstream-servers.js'

/**
 * A plain-HTTP request that offers an h2c upgrade (`Upgrade: h2c`, `Connection: Upgrade, HTTP2-Settings`, what
 * `curl --http2` sends to an http:// URL) and carries a body: node hands any request with an Upgrade header to the
 * server's `upgrade` listener without its body. The gateway does not do h2c on plaintext: it must serve the request
 * as the ordinary HTTP/1.1 request it also is, its body relayed whole. Real `lanegate start`, real backend, raw
 * socket (the bytes on the wire are the point).
 */
let gateway: SpawnedGateway
let backend: Backend

t.before(async () => {
  backend = await startBackend(t, 'B')
  backend.handle((req, res, body) => {
    res.writeHead(200, { 'content-type': 'text/plain' })
    res.end(`${req.method ?? ''} ${req.url ?? ''} echo:${body}`)
  })
  const started = await gatewayOnConfig(t, (dataDir) => `${configHead(dataDir)}
services:
  p:
    type: proxy
    prefix: /legacy/p
    envelope: exchange
    upstream: { targets: [ "${backend.url}" ] }
    routes:
      write: { methods: [POST], path: "/items/*" }
`)
  gateway = started.gateway
})

interface Answer { status: number, headers: Record<string, string>, body: string }

/** One HTTP/1.1 answer parsed from `bytes`, or undefined while it is not complete (Content-Length or chunked). */
function parseAnswer (bytes: Buffer): Answer | undefined {
  const text = bytes.toString('latin1')
  const end = text.indexOf('\r\n\r\n')
  if (end === -1) return undefined
  const [statusLine = '', ...lines] = text.slice(0, end).split('\r\n')
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const colon = line.indexOf(':')
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim()
  }
  const status = Number(statusLine.split(' ')[1])
  let rest = text.slice(end + 4)
  if (headers['content-length'] !== undefined) {
    const length = Number(headers['content-length'])
    return rest.length >= length ? { status, headers, body: rest.slice(0, length) } : undefined
  }
  if (headers['transfer-encoding'] !== 'chunked') return undefined
  let body = ''
  for (;;) {
    const sizeEnd = rest.indexOf('\r\n')
    if (sizeEnd === -1) return undefined
    const size = parseInt(rest.slice(0, sizeEnd), 16)
    if (size === 0) return { status, headers, body }
    if (rest.length < sizeEnd + 2 + size + 2) return undefined
    body += rest.slice(sizeEnd + 2, sizeEnd + 2 + size)
    rest = rest.slice(sizeEnd + 2 + size + 2)
  }
}

/**
 * Writes `bytes` on a new socket and resolves with the first whole HTTP/1.1 answer; with `{ status: 0 }` and what
 * came when the socket closed or a 15 s deadline passed first (an answer that never comes, as before the fix,
 * then fails the assertions instead of hanging the file).
 */
function exchange (bytes: string): Promise<Answer> {
  const url = new URL(gateway.base)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => socket.write(bytes))
    let received = Buffer.alloc(0)
    const giveUp = (): void => {
      socket.destroy()
      resolve({ status: 0, headers: {}, body: received.toString('latin1') })
    }
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk])
      const answer = parseAnswer(received)
      if (answer === undefined) return
      socket.destroy()
      resolve(answer)
    })
    socket.on('close', giveUp)
    socket.on('error', reject)
    socket.setTimeout(15_000, giveUp)
  })
}

const H2C = 'Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n'

t.test('a POST offering an h2c upgrade with a Content-Length body is relayed as plain HTTP/1.1 with its whole body', async (t) => {
  const body = JSON.stringify({ price: '1.99', note: 'x'.repeat(3000) })
  const answer = await exchange(`POST /legacy/p/items/7 HTTP/1.1\r\nHost: gateway\r\n${H2C}Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`)
  t.same([answer.status, answer.body], [200, `POST /items/7 echo:${body}`])
  const seen = backend.seen.at(-1)
  t.same([seen?.headers.upgrade, seen?.headers['http2-settings'], seen?.headers['content-length']], [undefined, undefined, String(body.length)], 'no upgrade goes upstream')
})

t.test('a chunked body offered with an h2c upgrade is relayed whole too', async (t) => {
  const answer = await exchange(`POST /legacy/p/items/8 HTTP/1.1\r\nHost: gateway\r\n${H2C}Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n`)
  t.same([answer.status, answer.body], [200, 'POST /items/8 echo:hello world'])
})
