import { connect } from 'node:net'
import t from 'tap'
import { buildTestApp, getToken, type TestApp } from '../helpers/build-app.js'

let gw: TestApp
let port: number
t.before(async () => {
  gw = await buildTestApp()
  await gw.app.listen({ port: 0, host: '127.0.0.1' })
  port = (gw.app.server.address() as { port: number }).port
})
t.teardown(() => gw.close())

/** Sends raw bytes and returns everything the server wrote before it closed the connection. */
function raw (bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(bytes))
    let answer = ''
    socket.on('data', (d: Buffer) => { answer += d.toString() })
    socket.on('close', () => resolve(answer))
    socket.on('error', reject)
  })
}

t.test('a request head over max_header_bytes answers 431 in JSON and closes', async (t) => {
  const answer = await raw(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`)
  t.match(answer, /^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/)
  t.match(answer, /\r\nConnection: close\r\n/)
  t.equal(answer.split('\r\n\r\n')[1], '{"error":"Request header fields too large."}')
})

t.test('smuggling shapes answer 400 in JSON and close the connection', async (t) => {
  const attempts = [
    'POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /x HTTP/1.1\r\n\r\n',
    'POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!',
    'POST /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n',
    'GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\r\n folded\r\n\r\n',
    'GET /healthz HTTP/1.1\rHost: x\r\n\r\n',
    'POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: +5\r\n\r\nhello',
    'GET /healthz HTTP/1.1\r\nHost : x\r\n\r\n',
  ]
  for (const attempt of attempts) {
    const answer = await raw(attempt)
    t.match(answer, /^HTTP\/1\.1 400 Bad Request\r\n/, JSON.stringify(attempt.slice(0, 60)))
    t.equal(answer.split('\r\n\r\n')[1], '{"error":"bad_request","message":"The request is not valid HTTP/1.1."}')
  }
})

// The policy chain runs synchronously for a cached token, so a service route can answer while llhttp is still
// inside the request's head: the framing error must still be what the caller gets, never a 200 first.
t.test('smuggling shapes on an authenticated service route answer 400, never the route\'s 200', async (t) => {
  const token = await getToken(gw.app, 'demo-content')
  await raw(`GET /public/v1/content HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`)
  const attempts = [
    `GET /public/v1/content HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n`,
    `GET /public/v1/content HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /x HTTP/1.1\r\n\r\n`,
    `GET /public/v1/content HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!`,
  ]
  for (const attempt of attempts) {
    const answer = await raw(attempt)
    t.match(answer, /^HTTP\/1\.1 400 Bad Request\r\n/, JSON.stringify(attempt.slice(-60)))
    t.notMatch(answer, /HTTP\/1\.1 200/)
  }
})
