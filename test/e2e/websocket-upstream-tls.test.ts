import { join } from 'node:path'
import { writeFileSync } from 'node:fs'
import t from 'tap'
import { sample, scrape } from '../helpers/prometheus.js'
import { spawnGateway, type SpawnedGateway } from '../helpers/spawn-gateway.js'
import { createTestPki } from '../helpers/test-pki.js'
import { closeOf, nextMessage, openWs } from '../helpers/ws-client.js'
import { startWsBackend, type WsBackend } from '../helpers/ws-backend.js'

/**
 * A WebSocket relayed to an https:// target uses the upstream's `tls:` block as the HTTP relay does: a `wss`
 * backend on a private CA made with openssl at run time, trusted through `ca_file`; one that requires a client
 * certificate and whose certificate names only a host name (`servername`); and, without the `tls:` block, the
 * documented failure: 502 `upstream_error`, `upstream_failure: tls`, nothing upgraded. Real `lanegate start`.
 */

const pki = createTestPki('WebSocket CA')
t.teardown(() => { pki.remove() })
const byAddress = pki.issue('ws-ip', 'events.internal', { sans: 'DNS:events.internal,IP:127.0.0.1' })
const byName = pki.issue('ws-name', 'events.internal', { sans: 'DNS:events.internal' })
const client = pki.issue('gw-client', 'lanegate-gateway', { usage: 'client' })

let gateway: SpawnedGateway
let trusted: WsBackend
let mtls: WsBackend
let wsBase: string

t.before(async () => {
  trusted = await startWsBackend(t, undefined, byAddress)
  mtls = await startWsBackend(t, undefined, { ...byName, clientCa: pki.caCert })
  const block = (name: string, url: string, tls: string): string => `
  ${name}:
    type: proxy
    prefix: /ws/${name}
    envelope: exchange
    upstream: { targets: [ "${url}" ], retry: { attempts: 1 }${tls === '' ? '' : `, tls: ${tls}`} }
    routes:
      events: { methods: [GET], path: "/*", websocket: true }`
  const file = join(pki.dir, 'gateway.yaml')
  writeFileSync(file, `
server: { data_dir: ${join(pki.dir, 'data')} }
admin: { port: 0 }
issuer: { issuer: http://localhost:8080 }
scopes: {}
services:
${block('private', trusted.url, `{ ca_file: "${pki.caCert}" }`)}
${block('mtls', mtls.url, `{ ca_file: "${pki.caCert}", cert_file: "${client.cert}", key_file: "${client.key}", servername: events.internal }`)}
${block('untrusted', trusted.url, '')}
`)
  gateway = await spawnGateway({ config: file })
  wsBase = gateway.base.replace('http:', 'ws:')
  t.teardown(() => { gateway.child.kill('SIGTERM'); return gateway.exited })
})

/** Opens a WebSocket through the gateway, sends `text` and resolves with the echo; the connection is closed after. */
async function echoThrough (path: string, text: string): Promise<string> {
  const opened = await openWs(`${wsBase}${path}`)
  if (!opened.open) throw new Error(`not upgraded: ${opened.status} ${opened.body}`)
  opened.ws.send(text)
  const echoed = await nextMessage(opened.ws)
  const closed = closeOf(opened.ws)
  opened.ws.close(1000)
  await closed
  return echoed.data.toString('utf8')
}

t.test('a wss upstream on a private CA is reached with the upstream\'s ca_file: a message echoes', async (t) => {
  t.equal(await echoThrough('/ws/private/feed', 'hello over wss'), 'hello over wss')
  t.equal(trusted.handshakes.at(-1)?.url, '/feed')
})

t.test('a wss upstream that requires a client certificate gets the gateway\'s, checked against servername', async (t) => {
  t.equal(await echoThrough('/ws/mtls/feed', 'hello with a client certificate'), 'hello with a client certificate')
  t.same([mtls.handshakes.at(-1)?.url, mtls.handshakes.at(-1)?.clientCn], ['/feed', 'lanegate-gateway'])
})

t.test('without the upstream\'s ca_file the upgrade fails as documented: 502 upstream_failure tls, nothing upgraded', async (t) => {
  const before = trusted.handshakes.length
  const opened = await openWs(`${wsBase}/ws/untrusted/feed`)
  if (opened.open) {
    opened.ws.terminate()
    t.fail('upgraded through an untrusted certificate')
    return
  }
  t.same([opened.status, JSON.parse(opened.body)], [502, {
    error: 'upstream_error',
    upstream_status: 0,
    upstream_failure: 'tls',
    upstream_body: '',
    message: 'The upstream service could not be reached.',
  }])
  t.equal(trusted.handshakes.length, before, 'the backend saw no handshake')
  t.equal(sample(await scrape(gateway.admin ?? ''), 'lanegate_upstream_requests_total', { upstream: 'untrusted', outcome: 'tls' }), 1, 'counted as a tls failure')
})
