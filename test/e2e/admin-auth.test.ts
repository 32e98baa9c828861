import t, { type Test } from 'tap'
import { hashSecret } from '../../src/secrets/secret-hash.js'
import { spawnGateway, startGatewayProcess } from '../helpers/spawn-gateway.js'
import { gatewayFixture, type FixtureFile, type GatewayFixture } from '../helpers/gateway-fixture.js'
import { lineOf } from '../helpers/console-gateway.js'

/** The shipped admin block with `auth` added under it. */
function withAdminAuth (auth: Record<string, unknown>): GatewayFixture {
  return gatewayFixture().set('admin.auth', auth)
}

const TOKEN = 'console-test-token-0123456789'

/** The admin URL on loopback (the listener binds every interface; the test only ever calls 127.0.0.1). */
function loopback (admin: string | undefined): string {
  return (admin ?? '').replace('0.0.0.0', '127.0.0.1')
}

t.test('lanegate start refuses an admin listener off loopback without admin.auth, naming the key and line', async (t) => {
  const config = await gatewayFixture().write()
  t.teardown(() => config.remove())
  const started = startGatewayProcess({ config: config.file, env: { LANEGATE_ADMIN_HOST: '0.0.0.0' } })
  t.equal(await started.exited, 1)
  const line = await lineOf(config.file, 'host: ${LANEGATE_ADMIN_HOST')
  t.match(started.errors(), new RegExp(`gateway\\.yaml:${line} admin\\.host: the admin listener on 0\\.0\\.0\\.0 \\(not a loopback address\\) needs admin\\.auth`))
  t.equal(started.output().includes('Admin listening'), false, 'nothing listened')
})

t.test('a bearer token env var that is not set stops the start with its name', async (t) => {
  const config = await withAdminAuth({ token_env: 'LANEGATE_CONSOLE_TEST_TOKEN' }).write()
  t.teardown(() => config.remove())
  const started = startGatewayProcess({ config: config.file, env: { LANEGATE_ADMIN_HOST: '0.0.0.0', LANEGATE_CONSOLE_TEST_TOKEN: '' } })
  t.equal(await started.exited, 1)
  t.match(started.errors(), /^cannot start: admin\.auth\.token_env: the environment variable LANEGATE_CONSOLE_TEST_TOKEN is not set/m)
})

async function bearerGateway (t: Test): Promise<{ admin: string, config: FixtureFile }> {
  const config = await withAdminAuth({ token_env: 'LANEGATE_CONSOLE_TEST_TOKEN' }).write()
  const gw = await spawnGateway({ config: config.file, env: { LANEGATE_ADMIN_HOST: '0.0.0.0', LANEGATE_CONSOLE_TEST_TOKEN: TOKEN } })
  t.teardown(async () => { gw.child.kill('SIGTERM'); await gw.exited; await config.remove() })
  return { admin: loopback(gw.admin), config }
}

t.test('with admin.auth token_env the console, its JSON and /metrics need the bearer token; the probes do not', async (t) => {
  const { admin } = await bearerGateway(t)
  for (const path of ['/', '/api/console/overview', '/api/console/routes', '/console/console.js', '/metrics']) {
    const res = await fetch(`${admin}${path}`)
    t.equal(res.status, 401, `${path} without a token`)
    t.equal(res.headers.get('www-authenticate'), 'Bearer realm="lanegate admin"')
    t.same(await res.json(), { error: 'Unauthenticated.' })
    const wrong = await fetch(`${admin}${path}`, { headers: { authorization: `Bearer ${TOKEN}x` } })
    t.equal(wrong.status, 401, `${path} with a wrong token`)
    await wrong.body?.cancel()
    const right = await fetch(`${admin}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } })
    t.equal(right.status, 200, `${path} with the token`)
    t.equal((await right.text()).includes(TOKEN), false, 'the token is never in an answer')
  }
  for (const path of ['/healthz', '/readyz']) {
    const res = await fetch(`${admin}${path}`)
    t.equal(res.status, 200, `${path} stays open for probes`)
    await res.body?.cancel()
  }
})

t.test('with admin.auth basic the console takes the user and the password whose scrypt hash is configured', async (t) => {
  const hash = await hashSecret('open-sesame-console', 10)
  const config = await withAdminAuth({ basic: { user: 'ops', password_hash: hash } }).write()
  const gw = await spawnGateway({ config: config.file, env: { LANEGATE_ADMIN_HOST: '0.0.0.0' } })
  t.teardown(async () => { gw.child.kill('SIGTERM'); await gw.exited; await config.remove() })
  const admin = loopback(gw.admin)
  const basic = (user: string, password: string): Record<string, string> => ({ authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` })
  const none = await fetch(`${admin}/api/console/config`)
  t.equal(none.status, 401)
  t.equal(none.headers.get('www-authenticate'), 'Basic realm="lanegate admin", charset="UTF-8"')
  t.same(await none.json(), { error: 'Unauthenticated.' })
  for (const [user, password] of [['ops', 'wrong'], ['root', 'open-sesame-console']] as const) {
    const res = await fetch(`${admin}/api/console/config`, { headers: basic(user, password) })
    t.equal(res.status, 401, `${user}:${password}`)
    await res.body?.cancel()
  }
  for (let i = 0; i < 2; i++) {
    const res = await fetch(`${admin}/api/console/config`, { headers: basic('ops', 'open-sesame-console') })
    t.equal(res.status, 200, `right credentials (${i === 0 ? 'checked' : 'remembered'})`)
    const body = await res.text()
    t.equal(body.includes(hash), false, 'the password hash is never in an answer')
  }
})

t.test('a password_hash that is not a scrypt hash is a config error at its path and line', async (t) => {
  const config = await withAdminAuth({ basic: { user: 'ops', password_hash: 'plain-text-password' } }).write()
  t.teardown(() => config.remove())
  const started = startGatewayProcess({ config: config.file })
  t.equal(await started.exited, 1)
  const line = await lineOf(config.file, 'password_hash: plain-text-password')
  t.match(started.errors(), new RegExp(`gateway\\.yaml:${line} admin\\.auth\\.basic\\.password_hash: not a scrypt PHC hash`))
  t.equal(started.errors().includes('plain-text-password'), false, 'the value is not echoed')
})
