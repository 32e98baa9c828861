import { request } from 'node:http'
import { connect } from 'node:net'
import t from 'tap'
import { configHead, gatewayOnConfig } from '../helpers/own-config-gateway.js'
import type { SpawnedGateway } from '../helpers/spawn-gateway.js'
import { startBackend, type Backend } from '../helpers/upstream-servers.js'
import { waitFor } from '../helpers/wait-for.js'

/**
 * A method a `proxy` route does not serve, on a real `lanegate start`: 405 with `Allow` in the block's envelope,
 * TRACE (and QUERY) included, as the token endpoint answers, refused before the body is read: a body that is not
 * JSON, over the block's `max_body_bytes` or over the server's body limit, or not even sent yet, changes nothing,
 * and nothing reaches the target.
 */
let gateway: SpawnedGateway
let backend: Backend

const METHOD_NOT_ALLOWED = { status: 405, allow: 'PUT, GET, HEAD', body: { error: 'method_not_allowed', message: 'Method not allowed.' } }

t.before(async () => {
  backend = await startBackend(t, 'B')
  const started = await gatewayOnConfig(t, (dataDir) => `${configHead(dataDir, 'body_limit_bytes: 1024')}
services:
  p:
    type: proxy
    prefix: /legacy/p
    envelope: exchange
    upstream: { targets: [ "${backend.url}" ] }
    max_body_bytes: 16
    routes:
      read: { methods: [GET, HEAD], path: "/items/*" }
      write: { methods: [PUT], path: "/items/:id" }
`)
  gateway = started.gateway
})

/** One request with node's client (fetch refuses TRACE). */
async function answer (method: string, body?: string, contentType = 'application/json'): Promise<{ status: number, allow: string | undefined, body: unknown }> {
  return new Promise((resolve, reject) => {
    const req = request(`${gateway.base}/legacy/p/items/1`, { method, headers: body === undefined ? {} : { 'content-type': contentType, 'content-length': Buffer.byteLength(body) } }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, allow: res.headers.allow, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }))
    })
    req.on('error', reject)
    req.end(body)
  })
}

t.test('TRACE and QUERY on a proxied path answer 405 with Allow, as every other unserved method', async (t) => {
  t.same(await answer('TRACE'), METHOD_NOT_ALLOWED)
  t.same(await answer('QUERY', '{}'), METHOD_NOT_ALLOWED)
  t.same(await answer('DELETE'), METHOD_NOT_ALLOWED)
  t.same(await answer('OPTIONS'), METHOD_NOT_ALLOWED)
  t.same(backend.seen, [], 'nothing reached the target')
})

t.test('a body that is not JSON, or over the block\'s or the server\'s limit, still gets 405: it is never parsed', async (t) => {
  t.same(await answer('PATCH', '{not json'), METHOD_NOT_ALLOWED)
  t.same(await answer('POST', 'x'.repeat(64)), METHOD_NOT_ALLOWED, 'over max_body_bytes (16)')
  t.same(await answer('POST', JSON.stringify({ pad: 'x'.repeat(4096) })), METHOD_NOT_ALLOWED, 'over server.body_limit_bytes (1024)')
  t.same(await answer('PATCH', 'a=1', 'application/x-www-form-urlencoded'), METHOD_NOT_ALLOWED, 'a content type no parser takes')
  t.same(backend.seen, [], 'nothing reached the target')
})

t.test('the 405 is sent before the body arrives: a request announcing 1 MB and sending 10 bytes gets its answer', async (t) => {
  const port = Number(new URL(gateway.base).port)
  const socket = connect(port, '127.0.0.1')
  t.teardown(() => { socket.destroy() })
  let received = ''
  socket.on('data', (chunk: Buffer) => { received += chunk.toString('latin1') })
  socket.write('PATCH /legacy/p/items/1 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1048576\r\n\r\n{"a":"1234')
  await waitFor(() => /\r\n\r\n\{[^}]*\}$/.test(received), { what: 'the whole 405 answer while the body is still owed' })
  const [head = '', body = ''] = received.split('\r\n\r\n')
  t.match(head, /^HTTP\/1\.1 405 Method Not Allowed\r\n/)
  t.match(head, /\r\nallow: PUT, GET, HEAD\r\n/i)
  t.same(JSON.parse(body), { error: 'method_not_allowed', message: 'Method not allowed.' })
})

t.test('a served method on the same path still reaches the target', async (t) => {
  const res = await fetch(`${gateway.base}/legacy/p/items/1`, { method: 'PUT', body: 'small', headers: { 'content-type': 'text/plain' } })
  t.same([res.status, await res.text()], [200, 'B'])
  t.same(backend.seen.map((r) => `${r.method} ${r.url} ${r.body}`), ['PUT /items/1 small'])
})
