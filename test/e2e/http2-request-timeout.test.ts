import { connect } from 'node:http2'
import t from 'tap'
import { gatewayOnConfig, gatewayPki } from '../helpers/own-config-gateway.js'
import type { SpawnedGateway } from '../helpers/spawn-gateway.js'
import { h2Request } from '../helpers/tls-clients.js'
import { startBackend, type Backend } from '../helpers/upstream-servers.js'

/**
 * `server.request_timeout_ms` over HTTP/2 on a real `lanegate start`: node enforces it on HTTP/1.1 connections
 * only, so an HTTP/2 caller that sent half a body and then nothing held its stream — and the relayed upstream
 * request — until the session's idle timeout (72 s). Now the stream gets the 408 an HTTP/1.1 caller gets.
 */
const { ca, pair } = gatewayPki(t, 'H2 timeout CA')

let gateway: SpawnedGateway
let backend: Backend
const received: string[] = []

t.before(async () => {
  backend = await startBackend(t, 'echo')
  // (startBackend calls the handler once it read the whole body: `req` has ended by then.)
  backend.handle((_req, res, body) => {
    received.push(body)
    res.writeHead(200, { 'content-type': 'text/plain' })
    res.end(`got ${body}`)
  })
  const started = await gatewayOnConfig(t, (dataDir) => `
server:
  data_dir: ${dataDir}
  tls: { ${pair} }
  http2: true
  request_timeout_ms: 1000
admin: false
issuer: { issuer: https://localhost:8443 }
scopes: {}
organizations: []
service_accounts: []
services:
  echo:
    type: proxy
    prefix: /echo
    envelope: exchange
    upstream: { targets: [ "${backend.url}" ] }
    routes:
      post: { methods: [POST], path: "/*" }
`, { admin: false })
  gateway = started.gateway
})

t.test('an HTTP/2 caller that sends half its body and then nothing gets 408 request_timeout and its stream ends', async (t) => {
  const session = connect(gateway.base, { ca })
  t.teardown(() => session.close())
  const stream = session.request({ ':method': 'POST', ':path': '/echo/half', 'content-type': 'text/plain', 'content-length': '10' })
  const answer = await new Promise<{ status: number, body: string }>((resolve, reject) => {
    let status = 0
    let body = ''
    stream.on('response', (headers) => { status = Number(headers[':status']) })
    stream.setEncoding('utf8')
    stream.on('data', (chunk: string) => { body += chunk })
    stream.on('close', () => resolve({ status, body }))
    stream.on('error', () => {})
    session.on('error', reject)
    stream.write('half!') // 5 of the 10 bytes announced, and no END_STREAM
  })
  t.same(answer, { status: 408, body: JSON.stringify({ error: 'The request was not received in time.' }) })
  t.same(received, [], 'the upstream never got a whole request')
})

t.test('an HTTP/2 caller whose whole body comes in time is relayed as before: the upstream gets the body and answers', async (t) => {
  const answer = await h2Request(gateway.base, ca, '/echo/whole', { method: 'POST', headers: { 'content-type': 'text/plain', 'content-length': '10' }, body: 'all ten!!!' })
  t.same([answer.status, answer.body], [200, 'got all ten!!!'])
  t.same(received, ['all ten!!!'])
})
