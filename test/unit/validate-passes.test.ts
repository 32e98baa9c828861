import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { bootGateway } from '../../src/start/boot.js'
import { ConfigError } from '../../src/config/config-error.js'
import { parseGatewayConfig } from '../../src/config/second-pass/load-gateway-config.js'
import { createLogger } from '../../src/logging/logger.js'
import { gatewayFixture } from '../helpers/gateway-fixture.js'

const demoFixture = gatewayFixture()
const demo = demoFixture.text()

async function problems (text: string): Promise<{ path: string, line?: number, message: string }[]> {
  try {
    await parseGatewayConfig(text, 'gateway.yaml', { env: {} })
  } catch (error) {
    if (error instanceof ConfigError) return error.problems.map((p) => ({ path: p.path, line: p.line, message: p.message }))
    throw error
  }
  return []
}

const lineOf = (text: string, needle: string): number => text.slice(0, text.indexOf(needle)).split('\n').length

t.test('validate reports a typo\'d key and a bad reference together', async (t) => {
  const text = demoFixture.rename('server.keep_alive_timeout_ms', 'keep_alive_timout_ms')
    .set('services.payments.routes.processor_config.0.scope.all', ['commerce:nope.read'])
    .text()
  t.same(await problems(text), [
    { path: 'server.keep_alive_timout_ms', line: lineOf(text, 'keep_alive_timout_ms'), message: 'unknown key "keep_alive_timout_ms"' },
    { path: 'services.payments.routes.processor_config[0].scope.all[0]', line: lineOf(text, 'commerce:nope.read'), message: 'unknown scope "commerce:nope.read": list it under scopes' },
  ])
})

t.test('an unknown service-level policy is reported once, not once per route', async (t) => {
  const text = demoFixture.rename('services.payments.policies.2.token-type', 'token-typo').text()
  const found = await problems(text)
  t.equal(found.length, 1)
  t.match(found[0], { path: 'services.payments.policies[2].token-typo', line: lineOf(text, 'token-typo'), message: /^unknown policy "token-typo"/ })
})

t.test('an unknown route id is an error with its path and line', async (t) => {
  const text = demoFixture.rename('services.fanout.routes.commit', 'comit').text()
  t.same(await problems(text), [
    { path: 'services.fanout.routes.comit', line: lineOf(text, 'comit:'), message: 'unknown route "comit" (service fanout has: preview, commit, get)' },
  ])
})

t.test('an unknown route id fails boot, and a reload to it is rejected (the running config stays)', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-routes-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const file = join(dir, 'gateway.yaml')
  // Relative paths resolve against the config's folder: the content folder stays the repository's.
  const goodFixture = demoFixture.set('server.data_dir', join(dir, 'data'))
  const good = goodFixture.text()
  const bad = goodFixture.rename('services.fanout.routes.commit', 'comit').text()
  await writeFile(file, bad)
  await t.rejects(bootGateway({ file, logger: createLogger('silent') }), { name: 'ConfigError', problems: [{ path: 'services.fanout.routes.comit' }] })

  await writeFile(file, good)
  const booted = await bootGateway({ file, logger: createLogger('silent') })
  t.teardown(() => booted.close())
  await writeFile(file, bad)
  const result = await booted.gateway.reload()
  t.equal(result.outcome, 'rejected')
  t.match((result as unknown as { error: ConfigError }).error.problems, [{ path: 'services.fanout.routes.comit', message: 'unknown route "comit" (service fanout has: preview, commit, get)' }])
  t.equal(booted.gateway.current().version, 1)
})

t.test('a changed plugins: list is a restart-required change on reload', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-plugins-reload-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  await writeFile(join(dir, 'p.mjs'), "export default { name: 'p', description: 'd', schema: { type: 'object' }, create: () => () => undefined }\n")
  const file = join(dir, 'gateway.yaml')
  // Relative paths resolve against the config's folder: the content folder stays the repository's.
  const good = demoFixture.set('server.data_dir', join(dir, 'data'))
  await writeFile(file, good.text())
  const booted = await bootGateway({ file, logger: createLogger('silent') })
  t.teardown(() => booted.close())
  await writeFile(file, good.set('plugins', ['./p.mjs']).text())
  t.same(await booted.gateway.reload(), { outcome: 'applied', version: 2, restartRequired: ['plugins'] })
})

t.test('the validated config is deep-frozen', async (t) => {
  const { config } = await parseGatewayConfig(demo, 'gateway.yaml', { env: {} })
  t.throws(() => { (config.server as { port: number }).port = 1 }, TypeError)
  t.throws(() => { (config.services.payments?.policies as unknown[]).push({}) }, TypeError)
})
