import { readFile } from 'node:fs/promises'
import t from 'tap'
import { parseGatewayConfig } from '../../src/config/second-pass/load-gateway-config.js'
import { gatewayFixture } from '../helpers/gateway-fixture.js'
import { repoPath } from '../helpers/paths.js'

const env = {}

t.test('the shipped fixture loads as the shipped gateway.yaml does, with content\'s source_dir made absolute', async (t) => {
  const shipped = await parseGatewayConfig(await readFile(repoPath('gateway.yaml'), 'utf8'), 'gateway.yaml', { env })
  const fixture = await parseGatewayConfig(gatewayFixture().text(), 'gateway.yaml', { env })
  t.equal(gatewayFixture().get('services.content.source_dir'), repoPath('content'), 'absolute in the text, so a copy elsewhere finds it')
  t.same(fixture.config, shipped.config, 'the same config once loaded (the loader resolves ./content against the file)')
})

t.test('set changes one key by path and keeps every comment and ${ENV} reference of the file', (t) => {
  const base = gatewayFixture()
  const edited = base.set('server.workers', 2).set('rate_limits.payments-per-ip.points', 5)
  t.equal(edited.get('server.workers'), 2)
  t.same(edited.get('rate_limits.payments-per-ip'), { key: 'ip', points: 5, window_seconds: 60 })
  t.match(edited.text(), /^ {2}headers_timeout_ms: 10000 +# slowloris brake$/m, 'a comment on another key stays')
  t.match(edited.text(), /^ {2}port: \$\{LANEGATE_PORT:-8080\}$/m, 'an ${ENV} reference stays as written')
  t.equal(base.get('server.workers'), 1, 'the fixture it was derived from is unchanged')
  t.match(edited.text(), /^ {2}workers: 2 # processes serving the port/m, 'the replaced value keeps its line comment')
  const flow = base.set('rate_limits.payments-per-ip', { key: 'ip', points: 7, window_seconds: 60 }).text()
  t.match(flow, /^ {2}payments-per-ip: \{ key: ip, points: 7, window_seconds: 60 \} # spec: all payments endpoints share it$/m, 'so does a replaced flow mapping')
  t.end()
})

t.test('set takes mappings and lists; delete removes a key; get reads plain data', (t) => {
  const fixture = gatewayFixture('minimal')
    .set('storage', { driver: 'postgres', postgres_url: 'postgres://x' })
    .set('server.trusted_proxies', ['10.0.0.0/8'])
    .delete('admin.port')
  t.same(fixture.get('storage'), { driver: 'postgres', postgres_url: 'postgres://x' })
  t.same(fixture.get('server.trusted_proxies'), ['10.0.0.0/8'])
  t.same(fixture.get('admin'), {})
  t.equal(fixture.get('server.nothing'), undefined)
  t.end()
})

t.test('a path through a key that is not there fails loudly, naming it (no key created by a typo)', (t) => {
  t.throws(() => gatewayFixture().set('sever.workers', 2), { message: 'fixture has no sever to set sever.workers in' })
  t.throws(() => gatewayFixture('minimal').delete('server.workers'), { message: 'fixture has no server.workers to delete' })
  t.end()
})

t.test('the minimal fixture is a whole config the real loader accepts, its admin listener on a free port', async (t) => {
  const loaded = await parseGatewayConfig(gatewayFixture('minimal').text(), 'gateway.yaml', { env })
  t.same(loaded.config.services, {})
  t.same(loaded.config.admin, { port: 0 })
})

t.test('write puts the fixture in a fresh folder as gateway.yaml; write(other) replaces it; remove deletes it', async (t) => {
  const fixture = gatewayFixture('minimal')
  const file = await fixture.write()
  t.teardown(() => file.remove())
  t.equal(await readFile(file.file, 'utf8'), fixture.text())
  const other = fixture.set('server.workers', 2)
  await file.write(other)
  t.equal(await readFile(file.file, 'utf8'), other.text())
})
