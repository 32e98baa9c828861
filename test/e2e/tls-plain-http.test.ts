import t from 'tap'
import { spawnGateway } from '../helpers/spawn-gateway.js'
import { gatewayFixture } from '../helpers/gateway-fixture.js'
import { curl } from '../helpers/tls-clients.js'
import { createTestPki } from '../helpers/test-pki.js'

/**
 * Plain HTTP sent to the TLS port used to get an empty reply (a TLS alert the client cannot read). It is answered
 * 400 "plain HTTP sent to the HTTPS port" in the plain envelope, as nginx does; HTTPS (HTTP/1.1 and h2) on the same
 * port is unchanged.
 */
const pki = createTestPki('Gateway CA')
t.teardown(() => pki.remove())
const gw = pki.issue('gw', 'localhost', { sans: 'DNS:localhost,IP:127.0.0.1' })
const cfg = await gatewayFixture().set('server.tls', { cert_file: gw.cert, key_file: gw.key }).set('server.http2', true).write()
t.teardown(() => cfg.remove())
const gateway = await spawnGateway({ config: cfg.file })
t.teardown(() => { gateway.child.kill('SIGKILL') })
const plainBase = gateway.base.replace('https://', 'http://')

t.test('plain HTTP to the TLS port is answered 400 with a JSON body that says so, and the connection closed', async (t) => {
  const res = await fetch(`${plainBase}/healthz`)
  t.same({ status: res.status, type: res.headers.get('content-type'), connection: res.headers.get('connection'), body: await res.json() }, {
    status: 400,
    type: 'application/json; charset=utf-8',
    connection: 'close',
    body: { error: 'bad_request', message: 'plain HTTP sent to the HTTPS port: use https://' },
  })
  const viaCurl = await curl([`${plainBase}/v1/stores`])
  t.same({ code: viaCurl.code, status: viaCurl.status }, { code: 0, status: 400 })
})

t.test('HTTPS on the same port is served as before, HTTP/1.1 and h2', async (t) => {
  for (const version of ['--http1.1', '--http2']) {
    const res = await curl([version, '--cacert', pki.caCert, `${gateway.base}/healthz`])
    t.same({ code: res.code, status: res.status, body: JSON.parse(res.body) }, { code: 0, status: 200, body: { status: 'ok', config_version: 1 } }, version)
  }
})
