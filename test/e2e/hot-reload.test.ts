import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { watchConfigFile } from '../../src/config/watch-config.js'
import { buildTestApp, getToken, type TestApp } from '../helpers/build-app.js'
import { gatewayFixture, type GatewayFixture } from '../helpers/gateway-fixture.js'
import { until } from '../helpers/wait-for.js'

/** Boots the demo config from a file of its own (so it can be edited) and watches it like `lanegate start`. */
async function bootFromFile (t: Test, base: GatewayFixture = gatewayFixture()): Promise<{ gw: TestApp, file: string, demo: GatewayFixture, write: (fixture: GatewayFixture) => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-reload-'))
  const file = join(dir, 'gateway.yaml')
  const demo = base.set('server.data_dir', join(dir, 'data'))
  await writeFile(file, demo.text())
  const gw = await buildTestApp({ file })
  const stop = watchConfigFile(file, () => { void gw.gateway.reload() })
  t.teardown(async () => {
    stop()
    await gw.close()
    await rm(dir, { recursive: true, force: true })
  })
  // Editors save by writing a new file and renaming it over the old one; do the same.
  const write = async (fixture: GatewayFixture): Promise<void> => {
    await writeFile(`${file}.tmp`, fixture.text())
    await rename(`${file}.tmp`, file)
  }
  return { gw, file, demo, write }
}

t.test('a valid edit takes effect within 2 s without a restart', async (t) => {
  const { gw, demo, write } = await bootFromFile(t)
  const token = await getToken(gw.app, 'demo-status')
  const read = () => gw.app.inject({ method: 'GET', url: '/api/v1/ecommerce/config/processor', headers: { authorization: `Bearer ${token}` } })
  t.equal((await read()).statusCode, 200)
  // Policy change: the processor config now needs the create scope, which demo-status lacks.
  await write(demo.set('services.payments.routes.processor_config', [{ scope: { all: ['commerce:payment-intents.create'] } }]))
  // The spec's "within 2 s" holds on an idle machine because the watcher polls every 500 ms; on a loaded one the
  // wait allows more, so the test tells "applied" from "never applied" without timing the machine.
  const editedAt = Date.now()
  t.ok(await until(async () => (await read()).statusCode === 403), 'the new policy applies without a restart')
  t.comment(`applied after ${Date.now() - editedAt} ms`)
  t.equal(gw.gateway.current().version, 2)
})

t.test('an invalid edit is rejected and logged; the running config stays', async (t) => {
  const { gw, demo, write } = await bootFromFile(t)
  await write(demo.set('issuer.unknown_key', 1))
  t.ok(await until(() => gw.logs.some((l) => l.includes('config reload rejected'))), 'the rejection is logged')
  const line = gw.logs.find((l) => l.includes('config reload rejected')) as string
  t.match(JSON.parse(line).problems, [{ path: 'issuer.unknown_key', message: 'unknown key "unknown_key"' }])
  t.equal(gw.gateway.current().version, 1)
  const token = await getToken(gw.app, 'demo-status')
  const res = await gw.app.inject({ method: 'GET', url: '/api/v1/ecommerce/config/processor', headers: { authorization: `Bearer ${token}` } })
  t.equal(res.statusCode, 200)
})

t.test('revoking an account stops its existing tokens at the next reload', async (t) => {
  const { gw, demo } = await bootFromFile(t)
  const token = await getToken(gw.app, 'demo-status')
  const read = () => gw.app.inject({ method: 'GET', url: '/api/v1/ecommerce/config/processor', headers: { authorization: `Bearer ${token}` } })
  t.equal((await read()).statusCode, 200)
  await writeFile(gw.gateway.file as string, demo.set('service_accounts.1.status', 'revoked').text())
  const result = await gw.gateway.reload() // what SIGHUP does
  t.equal(result.outcome, 'applied')
  const after = await read()
  t.equal(after.statusCode, 401)
  t.same(after.json(), { success: false, message: 'Unauthenticated.' })
})

t.test('reloads under load fail no request', async (t) => {
  const points = 'rate_limits.content-per-client.points'
  const { gw, demo, write } = await bootFromFile(t, gatewayFixture().set(points, 100000))
  await gw.app.listen({ port: 0, host: '127.0.0.1' })
  const address = gw.app.server.address() as { port: number }
  const token = await getToken(gw.app, 'demo-content')
  const url = `http://127.0.0.1:${address.port}/public/v1/content`
  let stop = false
  const statuses = new Map<number, number>()
  const worker = async (): Promise<void> => {
    while (!stop) {
      const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } })
      await res.arrayBuffer()
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
    }
  }
  const workers = Array.from({ length: 8 }, worker)
  // Five valid edits while requests flow: the content limit changes each time (still far above the load).
  for (let i = 1; i <= 5; i++) {
    await write(demo.set(points, 100000 + i))
    const version = i + 1
    t.ok(await until(() => gw.gateway.current().version === version), `reload ${i} applied`)
  }
  stop = true
  await Promise.all(workers)
  const total = [...statuses.values()].reduce((a, b) => a + b, 0)
  t.ok(total > 50, `${total} requests ran during the reloads`)
  t.same([...statuses.keys()], [200], 'every request succeeded')
})
