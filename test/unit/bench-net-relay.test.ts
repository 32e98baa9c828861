import { once } from 'node:events'
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net'
import t from 'tap'
import { ChunkedBody, parseResponseHead } from '../../bench/net-framing.js'
import { createNetRelay, upstreamRequestHead } from '../../bench/net-relay.js'

const LENGTH_ANSWER = 'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 17\r\nconnection: keep-alive\r\n\r\n{"lane":"bench"}\n'
const CHUNKED_PARTS = ['HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhel', 'lo\r\n7;ext=1\r\n, world\r\n0\r\nx-trailer: 1\r\n\r\n']
const CHUNKED_ANSWER = CHUNKED_PARTS.join('')

/** A lane answering raw bytes: /length by Content-Length, /chunked in two writes; it records each request head and connection. */
async function rawLane (): Promise<{ server: Server, url: URL, heads: string[], connections: () => number, close: () => void }> {
  const heads: string[] = []
  const sockets: Socket[] = []
  const server = createServer((socket) => {
    sockets.push(socket)
    let text = ''
    socket.setEncoding('latin1')
    socket.on('data', (chunk: string) => {
      text += chunk
      for (let end = text.indexOf('\r\n\r\n'); end !== -1; end = text.indexOf('\r\n\r\n')) {
        const head = text.slice(0, end)
        text = text.slice(end + 4)
        heads.push(head)
        if (head.startsWith('GET /chunked ')) {
          socket.write(CHUNKED_PARTS[0] as string, 'latin1')
          setImmediate(() => socket.write(CHUNKED_PARTS[1] as string, 'latin1'))
        } else socket.write(LENGTH_ANSWER, 'latin1')
      }
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  // Closing the lane's sockets closes the relay's kept ones too.
  const close = (): void => { server.close(); for (const socket of sockets) socket.destroy() }
  return { server, url: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`), heads, connections: () => sockets.length, close }
}

/** Sends `request` on `socket` and resolves with exactly `length` bytes of the answer. */
function ask (socket: Socket, request: string, length: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let answer = ''
    const onData = (chunk: Buffer): void => {
      answer += chunk.toString('latin1')
      if (answer.length < length) return
      socket.off('data', onData)
      resolve(answer)
    }
    socket.on('data', onData)
    socket.once('error', reject)
    socket.write(request, 'latin1')
  })
}

const GET = (path: string): string => `GET ${path} HTTP/1.1\r\nhost: relay\r\nauthorization: Bearer abc.def.ghi\r\naccept: */*\r\n\r\n`

t.test('the net floor relays a GET answered by Content-Length and one answered chunked, byte for byte, on one kept lane socket', async (t) => {
  const lane = await rawLane()
  const relay = createNetRelay(lane.url)
  relay.listen(0, '127.0.0.1')
  await once(relay, 'listening')
  const client = connect((relay.address() as AddressInfo).port, '127.0.0.1')
  t.teardown(() => { client.destroy(); relay.close(); lane.close() })
  await once(client, 'connect')
  t.same(await ask(client, GET('/length'), LENGTH_ANSWER.length), LENGTH_ANSWER)
  t.same(await ask(client, GET('/chunked'), CHUNKED_ANSWER.length), CHUNKED_ANSWER)
  t.same(await ask(client, GET('/length'), LENGTH_ANSWER.length), LENGTH_ANSWER)
  const forwarded = (path: string): string => `GET ${path} HTTP/1.1\r\nhost: ${lane.url.host}\r\naccept: */*`
  t.same(lane.heads, [forwarded('/length'), forwarded('/chunked'), forwarded('/length')])
  t.equal(lane.connections(), 1)
})

t.test('the net floor answers 502 and closes when the lane refuses connections', async (t) => {
  const closed = createServer()
  closed.listen(0, '127.0.0.1')
  await once(closed, 'listening')
  const port = (closed.address() as AddressInfo).port
  closed.close()
  await once(closed, 'close')
  const relay = createNetRelay(new URL(`http://127.0.0.1:${port}`))
  relay.listen(0, '127.0.0.1')
  await once(relay, 'listening')
  const client = connect((relay.address() as AddressInfo).port, '127.0.0.1')
  t.teardown(() => { client.destroy(); relay.close() })
  let answer = ''
  client.setEncoding('latin1')
  client.on('data', (chunk: string) => { answer += chunk })
  client.write(GET('/length'), 'latin1')
  await once(client, 'end')
  t.same(answer, 'HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\nconnection: close\r\n\r\n')
})

t.test('a GET with a body or another method is not relayed; connection: close is kept for the client side only', async (t) => {
  t.same(upstreamRequestHead('POST / HTTP/1.1\r\ncontent-length: 3\r\n', 'lane'), undefined)
  t.same(upstreamRequestHead('GET / HTTP/1.1\r\ntransfer-encoding: chunked\r\n', 'lane'), undefined)
  t.same(upstreamRequestHead('GET / HTTP/1.1\r\nconnection: close\r\nx-a: 1\r\n', 'lane'), { head: 'GET / HTTP/1.1\r\nhost: lane\r\nx-a: 1\r\n\r\n', close: true })
})

t.test('chunked framing finds the end of the body whatever the split of its bytes', async (t) => {
  const body = Buffer.from('5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\nx-trailer: 1\r\n\r\n', 'latin1')
  for (let cut = 0; cut <= body.length; cut++) {
    const framing = new ChunkedBody()
    const first = framing.consume(body.subarray(0, cut), 0)
    const end = first !== -1 ? first : framing.consume(body.subarray(cut), 0) + cut
    t.equal(end, body.length, `split at ${cut}`)
  }
})

t.test('a response head gives its framing: none for 204, by length, chunked, or until the lane closes', async (t) => {
  const framed = (head: string): [number, boolean, number] => {
    const parsed = parseResponseHead(head)
    return [parsed.status, parsed.keepAlive, parsed.framing.consume(Buffer.from('abcdef'), 1)]
  }
  t.same(framed('HTTP/1.1 204 No Content'), [204, true, 1])
  t.same(framed('HTTP/1.1 200 OK\r\ncontent-length: 3'), [200, true, 4])
  t.same(framed('HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 3'), [200, false, 4])
  t.same(framed('HTTP/1.1 200 OK'), [200, false, -1])
  t.same(framed('HTTP/1.0 200 OK\r\ncontent-length: 2'), [200, false, 3])
})
