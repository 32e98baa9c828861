import { readFile } from 'node:fs/promises'
import t from 'tap'
import { rewriteAndReload } from '../helpers/reload-helpers.js'
import { freePort, spawnGateway } from '../helpers/spawn-gateway.js'
import { gatewayFixture } from '../helpers/gateway-fixture.js'
import { createTestPki } from '../helpers/test-pki.js'
import { waitForText } from '../helpers/wait-for.js'

/**
 * With server.tls on, the demo's issuer `http://localhost:8080` names a port that speaks only HTTPS: tokens' iss and
 * the metadata are wrong. It used to go unsaid; now start warns, and so does a reload that sets such an issuer.
 */
t.test('an http issuer on the TLS port is warned about at start and on a reload that sets it; an https one is not', async (t) => {
  const pki = createTestPki('Gateway CA')
  t.teardown(() => pki.remove())
  const gw = pki.issue('gw', 'localhost', { sans: 'DNS:localhost,IP:127.0.0.1' })
  const port = await freePort()
  const cfg = await gatewayFixture()
    .set('server.tls', { cert_file: gw.cert, key_file: gw.key })
    .set('issuer.issuer', `http://localhost:${port}`)
    .write()
  t.teardown(() => cfg.remove())
  const gateway = await spawnGateway({ config: cfg.file, args: ['--port', String(port), '--host', '127.0.0.1'] })
  t.teardown(() => { gateway.child.kill('SIGKILL') })
  const warning = `issuer.issuer (http://localhost:${port}) is http but the gateway's listener speaks HTTPS only (server.tls)`
  const line = await waitForText(gateway.output, /^.*speaks HTTPS only[^\n]*\n/m, { what: 'the start warning' })
  t.match(JSON.parse(line), { level: 40, issuer: `http://localhost:${port}`, listening_port: port, listening_tls: true, msg: `${warning}: discovery metadata and token iss advertise the configured issuer; set issuer.issuer to the address clients use` })

  const base = await readFile(cfg.file, 'utf8')
  let from = gateway.output().length
  await rewriteAndReload(gateway, cfg.file, base.replace(`http://localhost:${port}`, `https://localhost:${port}`))
  await waitForText(gateway.output, 'config reloaded', { what: 'the https reload', from })
  t.notMatch(gateway.output().slice(from), /speaks HTTPS only/, 'https on the TLS port: nothing to say')
  from = gateway.output().length
  await rewriteAndReload(gateway, cfg.file, base)
  await waitForText(gateway.output, 'config reloaded', { what: 'the http reload', from })
  t.ok(await waitForText(gateway.output, warning, { what: 'the reload warning', from }))
})
