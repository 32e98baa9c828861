import { join } from 'node:path'
import { decodeJwt, decodeProtectedHeader, SignJWT, type JWTPayload } from 'jose'
import t from 'tap'
import { MAX_JSON_DEPTH } from '../../src/errors/json-body.js'
import { loadDevUserIssuer } from '../../src/oauth/dev-user-issuer.js'
import { getToken, type TestApp } from '../helpers/build-app.js'
import { gatewayFixture } from '../helpers/gateway-fixture.js'

/**
 * Findings 7–11 of issue 15 against the whole gateway on the demo gateway.yaml: one gateway for the file (each
 * case is one request and its answer; log checks read the lines logged since the case began), one of its own
 * for a changed config.
 */
let gw: TestApp
/** A demo-checkout token (both payments scopes). */
let checkout: string
t.before(async () => {
  gw = await gatewayFixture().boot(t)
  checkout = await getToken(gw.app, 'demo-checkout')
})

const BASE = '/api/v1/ecommerce'
const bearer = (token: string, extra: Record<string, string> = {}) => ({ authorization: `Bearer ${token}`, ...extra })
const deep = (depth: number): string => `${'{"a":'.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}`
const DEEP_REFUSED = { success: false, message: `The JSON body is nested deeper than ${MAX_JSON_DEPTH} levels.` }

t.test('7: 10,000-deep metadata with an Idempotency-Key → 400 in the payments envelope, no error-level log', async (t) => {
  const token = checkout
  const from = gw.logs.length
  const payload = `{"organization_id":"org_store_001","amount":100,"currency":"usd","metadata":${deep(10_000)}}`
  for (const url of [`${BASE}/payment-intents`, `${BASE}/payment-intents/pi_01ARZ3NDEKTSV4RRFFQ69G5FAV/cancel`]) {
    const res = await gw.app.inject({ method: 'POST', url, headers: bearer(token, { 'idempotency-key': 'deep-1', 'content-type': 'application/json' }), payload })
    t.equal(res.statusCode, 400, url)
    t.same(res.json(), DEEP_REFUSED)
  }
  t.notOk(gw.logs.slice(from).some((l) => l.includes('"level":50')), 'nothing logged at error level')
})

t.test('7: the bound is exact: depth 32 passes the parser, depth 33 does not; brackets inside strings do not count', async (t) => {
  const token = checkout
  const post = (metadata: string) => gw.app.inject({ method: 'POST', url: `${BASE}/payment-intents`, headers: bearer(token, { 'content-type': 'application/json' }), payload: `{"organization_id":"org_store_001","amount":100,"currency":"usd","metadata":${metadata}}` })
  // The body's own object is level 1, so metadata of depth 31 makes 32 in all.
  const ok = await post(deep(MAX_JSON_DEPTH - 1))
  t.equal(ok.statusCode, 422, 'parsed, then refused by validation (metadata values must be strings)')
  const tooDeep = await post(deep(MAX_JSON_DEPTH))
  t.equal(tooDeep.statusCode, 400)
  t.same(tooDeep.json(), DEEP_REFUSED)
  const inString = await post(`{"order":"${'['.repeat(100)}\\"{{{"}`)
  t.equal(inString.statusCode, 201)
})

t.test('7: deep JSON on another service answers in that service\'s envelope', async (t) => {
  const token = await getToken(gw.app, 'demo-exchange')
  const res = await gw.app.inject({ method: 'POST', url: '/v1/reports/daily-sales/run', headers: bearer(token, { 'content-type': 'application/json' }), payload: deep(100) })
  t.equal(res.statusCode, 400)
  t.match(res.json(), { message: `The JSON body is nested deeper than ${MAX_JSON_DEPTH} levels.` })
})

for (const method of ['TRACE', 'PATCH', 'PUT', 'DELETE', 'GET', 'OPTIONS'] as const) {
  t.test(`8: ${method} /oauth/token → 405 with Allow: POST, whatever the body`, async (t) => {
    const withBody = method !== 'GET' && method !== 'TRACE'
    const res = await gw.app.inject({
      method,
      url: '/oauth/token',
      headers: withBody ? { 'content-type': 'text/plain' } : {},
      payload: withBody ? 'x'.repeat(20_000) : undefined,
    })
    t.equal(res.statusCode, 405)
    t.equal(res.headers.allow, 'POST')
    t.same(res.json(), { error: 'invalid_request', error_description: 'The token endpoint accepts POST only.' })
  })
}

for (const contentType of ['text/plain', 'application/json; charset=utf-16', 'application/json;charset=latin1', 'application/x-www-form-urlencoded', 'application/jsonx']) {
  t.test(`9: payments refuse Content-Type ${contentType} with 415`, async (t) => {
    const token = checkout
    const res = await gw.app.inject({ method: 'POST', url: `${BASE}/payment-intents`, headers: bearer(token, { 'content-type': contentType }), payload: '{"organization_id":"org_store_001","amount":100,"currency":"usd"}' })
    t.equal(res.statusCode, 415)
    t.same(res.json(), { success: false, message: 'Unsupported Content-Type.' })
  })
}

for (const contentType of ['application/json', 'application/json; charset=utf-8', 'Application/JSON;Charset="UTF-8"']) {
  t.test(`9: payments accept Content-Type ${contentType}`, async (t) => {
    const token = checkout
    const res = await gw.app.inject({ method: 'POST', url: `${BASE}/payment-intents`, headers: bearer(token, { 'content-type': contentType }), payload: '{"organization_id":"org_store_001","amount":100,"currency":"usd"}' })
    t.equal(res.statusCode, 201)
  })
}

t.test('9: cancel without a body still works (no Content-Type needed)', async (t) => {
  const token = checkout
  const created = await gw.app.inject({ method: 'POST', url: `${BASE}/payment-intents`, headers: bearer(token), payload: { organization_id: 'org_store_001', amount: 100, currency: 'usd' } })
  const res = await gw.app.inject({ method: 'POST', url: `${BASE}/payment-intents/${created.json().data.id as string}/cancel`, headers: bearer(token) })
  t.equal(res.statusCode, 200)
})

/** Re-signs the claims of a real gateway token with the gateway's own signing key, changed by `change`. */
async function resign (gw: TestApp, token: string, change: (claims: JWTPayload) => JWTPayload): Promise<string> {
  const { signing } = gw.gateway.shared.keys
  return new SignJWT(change(decodeJwt(token))).setProtectedHeader({ ...decodeProtectedHeader(token), alg: signing.alg, kid: signing.kid, typ: 'at+jwt' }).sign(signing.privateKey)
}

t.test('11: a validly signed gateway token living longer than the longest configured lifetime → 401', async (t) => {
  const token = checkout
  const from = gw.logs.length
  const { issuer } = gw.gateway.current().config
  const longest = Math.max(issuer.default_lifetime_seconds, ...Object.values(issuer.scope_lifetimes))
  const now = Math.floor(Date.now() / 1000)
  const read = (tok: string) => gw.app.inject({ method: 'GET', url: `${BASE}/config/processor`, headers: bearer(tok) })
  const cases: [string, (c: JWTPayload) => JWTPayload, number][] = [
    ['exp 1e301', (c) => ({ ...c, exp: 1e301 }), 401],
    ['lifetime longest + tolerance + 1 s', (c) => ({ ...c, iat: now, exp: now + longest + issuer.clock_tolerance_seconds + 1 }), 401],
    ['iat far in the future with a short lifetime', (c) => ({ ...c, iat: now + 1e7, exp: now + 1e7 + 60 }), 401],
    ['iat missing', (c) => ({ ...c, iat: undefined }), 401],
    ['iat a string', (c) => ({ ...c, iat: String(now) as unknown as number }), 401],
    ['lifetime exactly the longest', (c) => ({ ...c, iat: now, exp: now + longest }), 200],
  ]
  for (const [name, change, status] of cases) {
    const res = await read(await resign(gw, token, change))
    t.equal(res.statusCode, status, name)
    if (status === 401) t.same(res.json(), { success: false, message: 'Unauthenticated.' }, name)
  }
  // The first three are refused by the lifetime check itself (jose already requires a numeric iat).
  t.equal(gw.logs.slice(from).filter((l) => l.includes('lifetime longer than its issuer allows')).length, 3)
})

t.test('11: user issuers: max_token_lifetime_seconds (default 86400) bounds user tokens', async (t) => {
  const gw = await gatewayFixture().set(['user_token_issuers', 0, 'max_token_lifetime_seconds'], 600).boot(t)
  const entry = gw.gateway.current().config.user_token_issuers[0]
  if (entry === undefined) throw new Error('the demo config has a user token issuer')
  const dev = await loadDevUserIssuer(join(gw.dataDir, entry.development_key_dir ?? ''))
  const mintFor = async (lifetimeSeconds: number) => (await dev.mintUserToken({ issuerConfig: entry, sub: 'user_1', organizationId: 'org_hq_demo', scopes: ['exchange:timeseries.read'], lifetimeSeconds })).token
  const query = (token: string) => gw.app.inject({ method: 'GET', url: '/v1/hq/timeseries/sales', headers: bearer(token) })
  const long = await query(await mintFor(3600))
  t.equal(long.statusCode, 401, 'a 1 h user token is refused when the issuer allows 10 min')
  const short = await query(await mintFor(300))
  t.not(short.statusCode, 401, 'a 5 min one passes auth')
})
