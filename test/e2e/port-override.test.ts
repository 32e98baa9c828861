import { appendFile } from 'node:fs/promises'
import t from 'tap'
import { spawnGateway } from '../helpers/spawn-gateway.js'
import { gatewayFixture } from '../helpers/gateway-fixture.js'
import { letTimePass, until } from '../helpers/wait-for.js'

const MISMATCH = /issuer\.issuer \(http:\/\/localhost:8080\) names port 8080 but the gateway listens on \d+/g

t.test('--port/--host: a reload that leaves server alone reports no restart; the issuer mismatch is warned once', async (t) => {
  const cfg = await gatewayFixture().set('server.data_dir', './data').write()
  t.teardown(() => cfg.remove())
  const gw = await spawnGateway({ config: cfg.file, args: ['--port', '0', '--host', '127.0.0.1'] })
  t.teardown(() => { gw.child.kill('SIGKILL') })
  // A valid edit outside `server`, after the watcher's first look at the file: it starts right after "listening"
  // and says nothing when it has, so two of its 500 ms intervals pass first (an edit before it would be missed).
  await letTimePass(2 * 500)
  await appendFile(cfg.file, '\n# an edit outside server\n')
  t.ok(await until(() => /config reloaded/.test(gw.output())), 'the edit was applied')
  t.notMatch(gw.output(), /take effect only after a restart/)
  t.same(await (await fetch(`${gw.base}/healthz`)).json(), { status: 'ok', config_version: 2 })
  const warnings = gw.output().match(MISMATCH) ?? []
  t.equal(warnings.length, 1, 'one warning, at start')
  const line = JSON.parse(gw.output().split('\n').find((l) => l.includes('names port 8080')) ?? '{}') as Record<string, unknown>
  t.match(line, { level: 40, issuer: 'http://localhost:8080', listening_port: gw.port })
})

t.test('an issuer on another host (a proxy in front) is not warned about', async (t) => {
  const cfg = await gatewayFixture().set('server.data_dir', './data').write()
  t.teardown(() => cfg.remove())
  const gw = await spawnGateway({ config: cfg.file, env: { LANEGATE_ISSUER: 'https://api.example.com' } })
  t.teardown(() => { gw.child.kill('SIGKILL') })
  t.same(await (await fetch(`${gw.base}/healthz`)).json(), { status: 'ok', config_version: 1 })
  t.notMatch(gw.output(), /names port/)
})

t.test('issuer.behind_proxy: true (the issuer is a load balancer in front) is not warned about, even on localhost', async (t) => {
  const cfg = await gatewayFixture().set('server.data_dir', './data').set('issuer.behind_proxy', true).write()
  t.teardown(() => cfg.remove())
  const gw = await spawnGateway({ config: cfg.file })
  t.teardown(() => { gw.child.kill('SIGKILL') })
  t.same(await (await fetch(`${gw.base}/healthz`)).json(), { status: 'ok', config_version: 1 })
  t.notMatch(gw.output(), /names port/)
})
