import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { buildTestApp, getToken } from '../helpers/build-app.js'
import { gatewayFixture } from '../helpers/gateway-fixture.js'

/** An outside policy whose options change on a hot reload: the new options apply without a restart. */
t.test('a reload that changes an outside policy\'s options applies them at once', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-plugin-reload-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  await writeFile(join(dir, 'gate.mjs'), `export default {
  name: 'gate',
  description: 'Open or closed, by option.',
  schema: { type: 'object', additionalProperties: false, properties: { open: { type: 'boolean', default: false } } },
  errors: { gate_closed: { status: 423, message: 'The gate is closed.' } },
  create: (options, context) => () => options.open ? undefined : context.refuse('gate_closed'),
}
`)
  const config = (gate: Record<string, unknown>): string => gatewayFixture()
    .set('plugins', ['./gate.mjs'])
    .set('server.data_dir', join(dir, 'data'))
    .append('services.content.routes.content_list', { gate })
    .text()
  const file = join(dir, 'gateway.yaml')
  await writeFile(file, config({}))
  const gw = await buildTestApp({ file })
  t.teardown(() => gw.close())
  const token = await getToken(gw.app, 'demo-content')
  const read = () => gw.app.inject({ method: 'GET', url: '/public/v1/content', headers: { authorization: `Bearer ${token}` } })

  const closed = await read()
  t.same({ status: closed.statusCode, body: closed.json() }, { status: 423, body: { error: 'gate_closed', message: 'The gate is closed.' } })
  await writeFile(file, config({ open: true }))
  t.match(await gw.gateway.reload(), { outcome: 'applied', version: 2 })
  t.equal((await read()).statusCode, 200)
})

/** A plugin added to `plugins:` of a running gateway is not loaded by a reload: the rejection says to restart. */
t.test('a reload that adds a plugin and uses its policy is rejected with "restart the gateway to use it"', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-plugin-added-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  await writeFile(join(dir, 'store-hours.mjs'), `export default {
  name: 'store-hours',
  version: '1.4.0',
  description: 'Always open.',
  schema: { type: 'object', additionalProperties: false, properties: {} },
  create: () => () => undefined,
}
`)
  const demo = gatewayFixture().set('server.data_dir', join(dir, 'data'))
  const file = join(dir, 'gateway.yaml')
  await writeFile(file, demo.text())
  const gw = await buildTestApp({ file })
  t.teardown(() => gw.close())
  await writeFile(file, demo.set('plugins', ['./store-hours.mjs']).append('services.content.routes.content_list', { 'store-hours': {} }).text())
  const result = await gw.gateway.reload()
  t.equal(result.outcome, 'rejected')
  const problems = (result as { error?: { problems?: { path: string, message: string }[] } }).error?.problems ?? []
  t.equal(problems.length, 1)
  t.match(problems[0], {
    path: 'services.content.routes.content_list[1].store-hours',
    message: /^unknown policy "store-hours" \(known: .*\); plugins: lists "\.\/store-hours\.mjs" since start, and plugins are loaded only at start: restart the gateway to use it$/,
  })
})
