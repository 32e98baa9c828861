import { createServer, request, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { configHead, gatewayOnConfig } from '../helpers/own-config-gateway.js'
import type { SpawnedGateway } from '../helpers/spawn-gateway.js'
import { startBackend, type Backend } from '../helpers/upstream-servers.js'
import { letTimePass, waitFor } from '../helpers/wait-for.js'

/**
 * An upstream's `response_ms` and `body_idle_ms` bound the UPSTREAM: its head, and an answer body that goes silent.
 * A caller uploading its request body slowly (pauses longer than either, but it keeps sending) is the server's
 * timeouts' business: neither clock runs until its body was sent whole. Through a real `lanegate start` with
 * 400 ms upstream timeouts in front of real backends on port 0; the caller pauses twice as long between chunks.
 */
const LIMIT_MS = 400
const CHUNKS = ['first chunk;', 'second chunk;', 'third chunk']

let gateway: SpawnedGateway
let reader: Backend
/** What the echoing backend received, once each request ended. */
const echoed: string[] = []

t.before(async () => {
  // Reads the whole body, then answers.
  reader = await startBackend(t, 'reader')
  reader.handle((_req, res, body) => {
    res.writeHead(200, { 'content-type': 'text/plain' })
    res.end(`received ${body}`)
  })
  // Answers its head at once and echoes the body as it reads it (upload progress): its answer is silent while the
  // caller pauses, because it waits for the caller.
  const echo = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' })
    res.flushHeaders()
    const parts: Buffer[] = []
    req.on('data', (chunk: Buffer) => {
      parts.push(chunk)
      res.write(chunk)
    })
    req.on('end', () => {
      echoed.push(Buffer.concat(parts).toString('utf8'))
      res.end(' (end)')
    })
  })
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => { echo.closeAllConnections(); echo.close(() => resolve()) }))
  const started = await gatewayOnConfig(t, (dataDir) => `${configHead(dataDir)}
services:
  reader:
    type: proxy
    prefix: /legacy/reader
    envelope: exchange
    upstream: { targets: [ "${reader.url}" ], timeouts: { response_ms: ${LIMIT_MS} } }
    routes:
      upload: { methods: [POST], path: "/upload" }
  echo:
    type: proxy
    prefix: /legacy/echo
    envelope: exchange
    upstream: { targets: [ "http://127.0.0.1:${(echo.address() as AddressInfo).port}" ], timeouts: { body_idle_ms: ${LIMIT_MS} } }
    routes:
      upload: { methods: [POST], path: "/upload" }
`)
  gateway = started.gateway
})

/** POSTs `CHUNKS` (chunked) to `path`, pausing twice the upstream's limit between two; the whole answer. */
async function slowUpload (path: string): Promise<{ status: number, body: string, complete: boolean }> {
  const req = request(`${gateway.base}${path}`, { method: 'POST', headers: { 'content-type': 'text/plain', 'transfer-encoding': 'chunked' } })
  let finished = false
  const answered = new Promise<{ status: number, body: string, complete: boolean }>((resolve, reject) => {
    req.on('response', (res: IncomingMessage) => {
      const parts: Buffer[] = []
      res.on('data', (chunk: Buffer) => parts.push(chunk))
      const done = (): void => { resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts).toString('utf8'), complete: res.complete }) }
      res.on('end', done)
      // A cut answer (the connection closed under it) still resolves, incomplete.
      res.on('close', done)
    })
    req.on('error', reject)
  }).finally(() => { finished = true })
  for (const [i, chunk] of CHUNKS.entries()) {
    // The caller's pause between two chunks is the behaviour under test: twice the upstream's limit.
    if (i > 0) await letTimePass(2 * LIMIT_MS)
    // The gateway already answered (a 502) or cut the connection: nothing more to send.
    if (req.destroyed || (finished && i > 0)) break
    req.write(chunk)
  }
  if (!req.destroyed) req.end()
  return answered
}

t.test('a caller uploading slower than body_idle_ms is not cut off while an upstream that answered early waits for its body', async (t) => {
  const answer = await slowUpload('/legacy/echo/upload')
  t.same(answer, { status: 200, body: `${CHUNKS.join('')} (end)`, complete: true })
  t.same(echoed, [CHUNKS.join('')], 'the upstream received the whole body')
})

t.test('a caller uploading slower than response_ms gets the answer of an upstream that reads the whole body first', async (t) => {
  const answer = await slowUpload('/legacy/reader/upload')
  t.same(answer, { status: 200, body: `received ${CHUNKS.join('')}`, complete: true })
  await waitFor(() => reader.seen.length === 1, { what: 'the backend to record the upload' })
  t.same(reader.seen.map((seen) => [seen.method, seen.url, seen.body]), [['POST', '/upload', CHUNKS.join('')]])
})
