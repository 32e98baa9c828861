import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { mountConsole } from '../../src/console/console-routes.js'
import { startConsoleState } from '../../src/console/console-state.js'
import { processConsoleSource } from '../../src/console/process-console.js'
import { buildAdminServer, processAdminDeps } from '../../src/observability/admin-server.js'
import type { TestApp } from '../helpers/build-app.js'
import { ADMIN_TOKEN, ADMIN_TOKEN_ENV, IDP_ISSUER, idpConsole } from '../helpers/idp-console.js'

/** The admin listener of a gateway booted in this process, with its console (and admin.auth), for inject. */
function adminOf (t: { teardown (fn: () => unknown): void }, gw: TestApp): FastifyInstance {
  const metrics = gw.metrics as NonNullable<TestApp['metrics']>
  const state = startConsoleState(metrics)
  const config = gw.gateway.current().config
  const admin = buildAdminServer({
    ...processAdminDeps(metrics, gw.readiness, () => gw.gateway.current().version),
    extend: (app) => { mountConsole(app, config.admin === false ? undefined : config.admin, processConsoleSource(gw, state)) },
  })
  t.teardown(async () => { state.stop(); await admin.close() })
  return admin
}

const HOST = '127.0.0.1:9464'

function post (admin: FastifyInstance, payload: string, headers: Record<string, string> = {}) {
  return admin.inject({
    method: 'POST',
    url: '/api/console/token',
    headers: { host: HOST, authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json', ...headers },
    payload,
  })
}

t.test('POST /api/console/token: the caller a pasted token maps to and each route\'s verdict, or its refusal', async (t) => {
  process.env[ADMIN_TOKEN_ENV] = ADMIN_TOKEN
  t.teardown(() => { delete process.env[ADMIN_TOKEN_ENV] })
  const idp = await idpConsole(t)
  const gw = await idp.fixture.boot(t)
  const admin = adminOf(t, gw)
  const usage = { error: 'Send the token as JSON: {"token": "<bearer token>"} with Content-Type: application/json.' }

  t.test('a valid token: issuer, mapped principal, lifetime, and per route pass / refuse / depends', async (t) => {
    const iat = Math.floor(Date.now() / 1000)
    const token = await idp.token(['pricing:read'], { iat })
    const res = await post(admin, JSON.stringify({ token: `Bearer ${token}` }))
    t.equal(res.statusCode, 200)
    t.equal(res.headers['cache-control'], 'no-store')
    const body = res.json() as { lifetime: { expires_in_seconds: number } }
    const left = body.lifetime.expires_in_seconds
    t.ok(left > 250 && left <= 300, `expires in ${left} s`)
    t.same(body, {
      verified: true,
      issuer: IDP_ISSUER,
      principal: { subject: 'jane', client_id: 'pos-terminal', organization: 'org_hq_demo', scopes: ['pricing:read'], token_type: 'user' },
      lifetime: { issued_at: new Date(iat * 1000).toISOString(), expires_at: new Date((iat + 300) * 1000).toISOString(), expires_in_seconds: left },
      routes: [
        { method: 'GET', path: '/legacy/pricing/prices/:sku', service: 'pricing', route: 'read_price', outcome: 'pass' },
        { method: 'PUT', path: '/legacy/pricing/prices/:sku', service: 'pricing', route: 'write_price', outcome: 'refuse', at: 'scope', status: 403, code: 'forbidden', note: 'pos-terminal lacks pricing:write' },
        { method: 'GET', path: '/legacy/pricing/stores/:store/prices', service: 'pricing', route: 'store_prices', outcome: 'depends', note: 'organization: :store must be an organization or store in org_hq_demo\'s tree' },
      ],
    })
    t.notOk(JSON.stringify(gw.logs).includes(token), 'the token is in no log line')
  })

  t.test('a refused token: the status, code and description a request with it would get', async (t) => {
    const token = await idp.token(['pricing:read'], { iat: Math.floor(Date.now() / 1000) - 900 })
    const res = await post(admin, JSON.stringify({ token }))
    t.equal(res.statusCode, 200)
    t.same(res.json(), { verified: false, refusal: { status: 401, code: 'unauthenticated', description: 'The access token expired' } })
    const garbage = await post(admin, JSON.stringify({ token: 'not a token' }))
    t.same(garbage.json(), { verified: false, refusal: { status: 401, code: 'unauthenticated', description: 'The access token is malformed' } })
  })

  t.test('a malformed body: 400 with the usage, never a piece of the body', async (t) => {
    const secretish = 'eyJhbGciOiJSUzI1NiJ9.not-json-at-all'
    for (const payload of [`{"token": "${secretish}"`, '{}', '{"token": 7}', '{"token": "  "}', '[]', 'null']) {
      const res = await post(admin, payload)
      t.equal(res.statusCode, 400, payload)
      t.same(res.json(), usage, payload)
    }
    const form = await post(admin, `token=${secretish}`, { 'content-type': 'application/x-www-form-urlencoded' })
    t.equal(form.statusCode, 415)
    t.same(form.json(), usage)
    const big = await post(admin, JSON.stringify({ token: 'a'.repeat(20_000) }))
    t.equal(big.statusCode, 413)
    t.same(big.json(), { error: 'The body is larger than 16384 bytes.' })
  })

  t.test('another origin\'s page is refused; without the admin credentials 401', async (t) => {
    const token = await idp.token(['pricing:read'])
    const crossSite = await post(admin, JSON.stringify({ token }), { origin: 'https://evil.test', 'sec-fetch-site': 'cross-site' })
    t.equal(crossSite.statusCode, 403)
    t.same(crossSite.json(), { error: 'Paste tokens from the console page itself: this request came from another origin.' })
    const otherOrigin = await post(admin, JSON.stringify({ token }), { origin: 'http://127.0.0.1:1234' })
    t.equal(otherOrigin.statusCode, 403)
    const own = await post(admin, JSON.stringify({ token }), { origin: `http://${HOST}`, 'sec-fetch-site': 'same-origin' })
    t.equal(own.statusCode, 200)
    const anonymous = await admin.inject({ method: 'POST', url: '/api/console/token', headers: { host: HOST, 'content-type': 'application/json' }, payload: JSON.stringify({ token }) })
    t.equal(anonymous.statusCode, 401)
    t.same(anonymous.json(), { error: 'Unauthenticated.' })
    const get = await admin.inject({ method: 'GET', url: `/api/console/token?token=${token}`, headers: { host: HOST, authorization: `Bearer ${ADMIN_TOKEN}` } })
    t.equal(get.statusCode, 404, 'no GET: a token never goes in a URL')
  })
})
