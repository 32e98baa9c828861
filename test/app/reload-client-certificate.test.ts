import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { buildTestApp } from '../helpers/build-app.js'
import { createTestPki } from '../helpers/test-pki.js'
import { startBackend } from '../helpers/upstream-servers.js'

/**
 * A reload that turns on `server.tls.client_ca_file` (which waits for a restart) and a `client-certificate` route
 * in the same file: the policy used to be applied at once, so over the plain listener every request of the route
 * was 401 client_certificate_required. Such a reload is refused, naming each place; TLS alone is applied and named.
 */
const pki = createTestPki('Gateway CA')
const clients = createTestPki('Tills CA')
t.teardown(() => { pki.remove(); clients.remove() })
pki.issue('gw', 'localhost', { sans: 'DNS:localhost,IP:127.0.0.1' })
const backend = await startBackend(t, 'pricing')
const file = join(pki.dir, 'gateway.yaml')
const config = (tls: string, policies: string) => `
server:
  data_dir: ${join(pki.dir, 'data')}
${tls}
admin: false
scopes:
  pricing:read: { description: Read prices }
services:
  tills:
    type: proxy
    prefix: /tills
    envelope: exchange
    upstream: { targets: [ "${backend.url}" ] }
    routes:
      prices: { methods: [GET], path: /prices, policies: [ ${policies} ] }
`
const TLS = `  tls: { cert_file: gw.crt, key_file: gw.key, client_ca_file: ${clients.caCert} }`
await writeFile(file, config('', ''))
const gw = await buildTestApp({ file })
t.teardown(() => gw.close())
const prices = async () => (await gw.app.inject({ method: 'GET', url: '/tills/prices' })).statusCode

t.test('client-certificate with the client CA still waiting for a restart: the reload is refused and says why, the route stays open', async (t) => {
  t.equal(await prices(), 200)
  await writeFile(file, config(TLS, '{ client-certificate: {} }'))
  const result = await gw.gateway.reload()
  t.equal(result.outcome, 'rejected')
  t.same((result as { error?: { problems?: unknown } }).error?.problems, [{
    path: 'services.tills.routes.prices.policies[0].client-certificate',
    message: 'the running listener was started without server.tls.client_ca_file, so no caller\'s certificate is asked for or verified: ' +
      'applied now, every request here would be refused 401 client_certificate_required. Reload refused (the running config stays); restart the gateway to apply this file',
  }])
  t.equal(gw.gateway.current().version, 1)
  t.equal(await prices(), 200, 'not 401 client_certificate_required')
  t.match(gw.logs.join(''), /config reload rejected; the running config stays/)
})

t.test('the TLS block alone is applied, and the restart warning names the key', async (t) => {
  await writeFile(file, config(TLS, ''))
  t.same(await gw.gateway.reload(), { outcome: 'applied', version: 2, restartRequired: ['server.tls'] })
  t.match(gw.logs.join(''), /these changes take effect only after a restart: server\.tls \(the listener and its limits are set up at start only\)/)
  t.equal(await prices(), 200)
})
