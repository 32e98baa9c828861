import t from 'tap'
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose'
import type { LightMyRequestResponse } from 'fastify'
import type { GatewayConfig } from '../../src/config/types.js'
import type { KeyStore } from '../../src/runtime/shared-resources.js'
import { basicAuth, buildOauthApp, postToken, type OauthApp, type OauthAppOptions } from '../helpers/oauth-app.js'
import { buildOauthConfig, CONTENT_SCOPES, PAYMENT_SCOPES, SECRETS } from '../helpers/oauth-config.js'

/** Every log line of this file; the last test checks that no secret, token or Basic value is among them (G5). */
const logs: string[] = []
/** Every credential and token this file sends or receives. */
const sensitive = new Set<string>(Object.values(SECRETS))

const config = await buildOauthConfig()
t.teardown(async () => {
  const { rm } = await import('node:fs/promises')
  await rm(config.server.data_dir, { recursive: true, force: true })
})

async function app (t: { teardown (fn: () => unknown): void }, options: OauthAppOptions = {}): Promise<OauthApp> {
  const built = await buildOauthApp({ config, logs, ...options })
  t.teardown(() => built.close())
  return built
}

const form = (clientId: string, secret: string, extra: Record<string, string> = {}) =>
  ({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret, ...extra })

function remember (res: LightMyRequestResponse): LightMyRequestResponse {
  if (res.statusCode === 200) sensitive.add((res.json() as { access_token: string }).access_token)
  return res
}

/** Headers of a response without the ones that differ on every request. */
function stableHeaders (res: LightMyRequestResponse): Record<string, unknown> {
  const { date: _date, 'x-request-id': _id, ...rest } = res.headers
  return rest
}

const NO_CACHE = { 'cache-control': 'no-store', pragma: 'no-cache' }

// ---------------------------------------------------------------- success (A1) and the token itself

t.test('A1: a valid client_credentials request gets the token response, no-store, no refresh_token', async (t) => {
  const { app: server } = await app(t)
  const res = remember(await postToken(server, form('content-reader', SECRETS.content)))
  t.equal(res.statusCode, 200)
  t.match(res.headers, { ...NO_CACHE, 'content-type': 'application/json; charset=utf-8' })
  const body = res.json()
  t.same(body, {
    access_token: body.access_token,
    token_type: 'Bearer',
    expires_in: 86400,
    expires_at: body.expires_at,
    scope: 'engage:content.view engage:circulars.view',
  })
  t.type(body.access_token, 'string')
  t.notOk('refresh_token' in body)
})

t.test('the issued JWT: header {alg, kid, typ:at+jwt} and every claim', async (t) => {
  const { app: server, keys } = await app(t)
  const res = remember(await postToken(server, form('checkout', SECRETS.checkout, { scope: 'commerce:payment-intents.read' })))
  const body = res.json()
  t.same(decodeProtectedHeader(body.access_token), { alg: 'EdDSA', kid: keys.signing.kid, typ: 'at+jwt' })
  const { payload } = await jwtVerify(body.access_token, createLocalJWKSet(keys.jwks()), {
    algorithms: ['EdDSA'], typ: 'at+jwt', issuer: 'https://auth.lanegate.test', audience: 'lanegate',
  })
  t.same(payload, {
    iss: 'https://auth.lanegate.test',
    sub: 'checkout',
    aud: 'lanegate',
    iat: payload.iat,
    exp: (payload.iat as number) + 3600,
    jti: payload.jti,
    client_id: 'checkout',
    scope: 'commerce:payment-intents.read',
    scopes: ['commerce:payment-intents.read'],
    organization_id: 'org_acme',
    token_type: 'service',
  })
  t.equal(body.expires_at, payload.exp)
  t.match(payload.jti, /^[A-Za-z0-9_-]{22,}$/, 'jti carries at least 128 random bits')
  const again = remember(await postToken(server, form('checkout', SECRETS.checkout)))
  t.not((await jwtVerify(again.json().access_token, keys.resolve)).payload.jti, payload.jti, 'a fresh jti per token')
})

// ---------------------------------------------------------------- scope rules and lifetimes

t.test('scope omitted → every allowed scope', async (t) => {
  const { app: server } = await app(t)
  const res = remember(await postToken(server, form('mixed', SECRETS.mixed)))
  t.equal(res.json().scope, [...CONTENT_SCOPES, ...PAYMENT_SCOPES].join(' '))
})

t.test('empty scope= counts as omitted (A5)', async (t) => {
  const { app: server } = await app(t)
  const res = remember(await postToken(server, form('mixed', SECRETS.mixed, { scope: '' })))
  t.equal(res.json().scope, [...CONTENT_SCOPES, ...PAYMENT_SCOPES].join(' '))
})

t.test('a subset → exactly that subset; repeated names are granted once', async (t) => {
  const { app: server } = await app(t)
  const res = remember(await postToken(server, form('mixed', SECRETS.mixed, { scope: 'engage:circulars.view commerce:payment-intents.read engage:circulars.view' })))
  t.equal(res.statusCode, 200)
  t.equal(res.json().scope, 'engage:circulars.view commerce:payment-intents.read')
})

for (const [label, scope] of [['not allowed to the account', 'engage:content.view engage:content.create'], ['not existing', 'engage:content.view engage:everything']]) {
  t.test(`a scope ${label} → 400 invalid_scope (A6)`, async (t) => {
    const { app: server } = await app(t)
    const res = await postToken(server, form('content-reader', SECRETS.content, { scope }))
    t.equal(res.statusCode, 400)
    t.match(res.headers, NO_CACHE)
    t.same(res.json(), { error: 'invalid_scope', error_description: 'The requested scope is invalid or not authorized for this client.' })
  })
}

for (const [clientId, secret, scope, lifetime] of [
  ['content-reader', SECRETS.content, undefined, 86400],
  ['checkout', SECRETS.checkout, undefined, 3600],
  ['mixed', SECRETS.mixed, undefined, 3600],
  ['mixed', SECRETS.mixed, 'engage:content.view engage:circulars.view', 86400],
  ['plain', SECRETS.plain, undefined, 1800],
] as const) {
  t.test(`lifetime: ${clientId} ${scope ?? '(all scopes)'} → ${lifetime} s (shortest scope wins, else default)`, async (t) => {
    const { app: server, keys } = await app(t)
    const res = remember(await postToken(server, form(clientId, secret, scope === undefined ? {} : { scope })))
    t.equal(res.json().expires_in, lifetime)
    const { payload } = await jwtVerify(res.json().access_token, keys.resolve)
    t.equal((payload.exp as number) - (payload.iat as number), lifetime)
  })
}

// ---------------------------------------------------------------- the spec's token error table

t.test('400 invalid_request: one missing parameter is named', async (t) => {
  const { app: server } = await app(t)
  const res = await postToken(server, { client_id: 'content-reader', client_secret: SECRETS.content })
  t.equal(res.statusCode, 400)
  t.match(res.headers, NO_CACHE)
  t.same(res.json(), { error: 'invalid_request', error_description: 'Missing required parameter: grant_type.' })
})

t.test('400 invalid_request: every missing parameter is listed in one error', async (t) => {
  const { app: server } = await app(t)
  const res = await postToken(server, { scope: 'engage:content.view', grant_type: '' })
  t.equal(res.statusCode, 400)
  t.same(res.json(), { error: 'invalid_request', error_description: 'Missing required parameters: grant_type, client_id, client_secret.' })
})

for (const [label, contentType, payload] of [
  ['a JSON body', 'application/json', JSON.stringify(form('content-reader', SECRETS.content))],
  ['text/plain', 'text/plain', new URLSearchParams(form('content-reader', SECRETS.content)).toString()],
  ['multipart', 'multipart/form-data; boundary=x', '--x--'],
] as const) {
  t.test(`400 invalid_request: wrong Content-Type (${label}), before any body parsing (A8)`, async (t) => {
    const { app: server } = await app(t)
    const res = await postToken(server, payload, { contentType })
    t.equal(res.statusCode, 400)
    t.match(res.headers, NO_CACHE)
    t.same(res.json(), { error: 'invalid_request', error_description: 'Content-Type must be application/x-www-form-urlencoded.' })
  })
}

t.test('400 invalid_request: no Content-Type and no body', async (t) => {
  const { app: server } = await app(t)
  const res = await server.inject({ method: 'POST', url: '/oauth/token' })
  t.equal(res.statusCode, 400)
  t.same(res.json(), { error: 'invalid_request', error_description: 'Content-Type must be application/x-www-form-urlencoded.' })
})

for (const grantType of ['password', 'authorization_code', 'client_credentials ', '%00garbage']) {
  t.test(`400 unsupported_grant_type: grant_type=${JSON.stringify(grantType)} (A6)`, async (t) => {
    const { app: server } = await app(t)
    const res = await postToken(server, form('content-reader', SECRETS.content, { grant_type: grantType }))
    t.equal(res.statusCode, 400)
    t.match(res.headers, NO_CACHE)
    t.same(res.json(), { error: 'unsupported_grant_type', error_description: 'Only the client_credentials grant type is supported; use grant_type=client_credentials.' })
  })
}

const INVALID_CLIENT = { error: 'invalid_client', error_description: 'Client authentication failed.' }

t.test('401 invalid_client: unknown client, wrong secret and a revoked client with a wrong secret are identical (A4)', async (t) => {
  const { app: server } = await app(t)
  const unknown = await postToken(server, form('nobody', SECRETS.content))
  const wrong = await postToken(server, form('content-reader', 'not-the-secret'))
  const revokedWrong = await postToken(server, form('revoked', 'not-the-secret'))
  for (const res of [unknown, wrong, revokedWrong]) {
    t.equal(res.statusCode, 401)
    t.same(res.json(), INVALID_CLIENT)
    t.equal(res.body, unknown.body, 'byte-identical body')
  }
  t.same(stableHeaders(wrong), stableHeaders(unknown))
  t.same(stableHeaders(revokedWrong), stableHeaders(unknown))
  t.notOk('www-authenticate' in unknown.headers, 'no Basic challenge when the body carried the credentials')
})

t.test('401 invalid_client "revoked": only after the revoked client\'s correct secret (spec row)', async (t) => {
  const { app: server } = await app(t)
  const res = await postToken(server, form('revoked', SECRETS.revoked))
  t.equal(res.statusCode, 401)
  t.match(res.headers, NO_CACHE)
  t.same(res.json(), { error: 'invalid_client', error_description: 'The client has been revoked.' })
})

t.test('401 invalid_client: a client revoked by a reload stops getting tokens', async (t) => {
  const built = await app(t)
  t.equal(remember(await postToken(built.app, form('content-reader', SECRETS.content))).statusCode, 200)
  built.setConfig(withAccount(config, 'content-reader', (a) => ({ ...a, status: 'revoked' })))
  const res = await postToken(built.app, form('content-reader', SECRETS.content))
  t.equal(res.statusCode, 401)
  t.same(res.json(), { error: 'invalid_client', error_description: 'The client has been revoked.' })
})

t.test('500 server_error: a key store failure answers without a stack or detail (A10)', async (t) => {
  const broken: KeyStore = {
    get signing (): KeyStore['signing'] { throw new Error('EACCES: permission denied, open /var/lib/lanegate/keys/secret.pem') },
    jwks: () => ({ keys: [] }),
    resolve: async () => { throw new Error('no keys') },
  }
  const { app: server } = await app(t, { keys: broken })
  const res = await postToken(server, form('content-reader', SECRETS.content))
  t.equal(res.statusCode, 500)
  t.match(res.headers, NO_CACHE)
  t.same(res.json(), { error: 'server_error', error_description: 'Internal server error.' })
})

// ---------------------------------------------------------------- client authentication (A2, A3, A7), rotation

t.test('A2: HTTP Basic with a secret containing : % + and a space → 200', async (t) => {
  const { app: server } = await app(t)
  const basic = basicAuth('special', SECRETS.special)
  sensitive.add(basic)
  const res = remember(await postToken(server, { grant_type: 'client_credentials' }, { headers: { authorization: basic } }))
  t.equal(res.statusCode, 200)
  t.equal(res.json().scope, CONTENT_SCOPES.join(' '))
})

t.test('the same special secret in the body → 200', async (t) => {
  const { app: server } = await app(t)
  t.equal(remember(await postToken(server, form('special', SECRETS.special))).statusCode, 200)
})

t.test('A3: Basic with a wrong secret → 401 invalid_client with WWW-Authenticate: Basic', async (t) => {
  const { app: server } = await app(t)
  const basic = basicAuth('content-reader', 'wrong-secret')
  sensitive.add(basic)
  const res = await postToken(server, { grant_type: 'client_credentials' }, { headers: { authorization: basic } })
  t.equal(res.statusCode, 401)
  t.match(res.headers, { ...NO_CACHE, 'www-authenticate': 'Basic realm="lanegate"' })
  t.same(res.json(), INVALID_CLIENT)
  const unknown = await postToken(server, { grant_type: 'client_credentials' }, { headers: { authorization: basicAuth('nobody', 'wrong-secret') } })
  t.same(stableHeaders(unknown), stableHeaders(res), 'unknown client over Basic looks the same (A4)')
  t.equal(unknown.body, res.body)
})

t.test('A7: credentials in both the Basic header and the body → 400 invalid_request', async (t) => {
  const { app: server } = await app(t)
  const res = await postToken(server, form('content-reader', SECRETS.content), { headers: { authorization: basicAuth('content-reader', SECRETS.content) } })
  t.equal(res.statusCode, 400)
  t.same(res.json(), { error: 'invalid_request', error_description: 'Client credentials were sent both in the Authorization header and in the body; use one.' })
})

t.test('A7: client_secret in the query string → 400 invalid_request', async (t) => {
  const { app: server } = await app(t)
  const res = await postToken(server, { grant_type: 'client_credentials', client_id: 'content-reader' },
    { query: `client_secret=${encodeURIComponent(SECRETS.content)}` })
  t.equal(res.statusCode, 400)
  t.same(res.json(), { error: 'invalid_request', error_description: 'client_secret must not be sent in the query string.' })
})

t.test('rotation: both configured secrets work; a secret removed by a reload is rejected', async (t) => {
  const built = await app(t)
  t.equal(remember(await postToken(built.app, form('rotating', SECRETS.rotatingOld))).statusCode, 200)
  t.equal(remember(await postToken(built.app, form('rotating', SECRETS.rotatingNew))).statusCode, 200)
  built.setConfig(withAccount(config, 'rotating', (a) => ({ ...a, secrets: a.secrets.slice(1) })))
  const old = await postToken(built.app, form('rotating', SECRETS.rotatingOld))
  t.equal(old.statusCode, 401)
  t.same(old.json(), INVALID_CLIENT)
  t.equal(remember(await postToken(built.app, form('rotating', SECRETS.rotatingNew))).statusCode, 200)
})

t.test('G2: a secret differing only after byte 72 → 401', async (t) => {
  const { app: server } = await app(t)
  t.equal(remember(await postToken(server, form('long', SECRETS.long))).statusCode, 200)
  t.equal((await postToken(server, form('long', SECRETS.longTwin))).statusCode, 401)
})

// ---------------------------------------------------------------- form handling (A5, A8)

t.test('A5: grant_type sent twice → 400 invalid_request', async (t) => {
  const { app: server } = await app(t)
  const body = `grant_type=client_credentials&grant_type=client_credentials&client_id=content-reader&client_secret=${encodeURIComponent(SECRETS.content)}`
  const res = await postToken(server, body)
  t.equal(res.statusCode, 400)
  t.same(res.json(), { error: 'invalid_request', error_description: 'Parameters must not be sent more than once: grant_type.' })
})

t.test('A5: scope sent twice → 400 invalid_request', async (t) => {
  const { app: server } = await app(t)
  const body = new URLSearchParams(form('content-reader', SECRETS.content))
  body.append('scope', 'engage:content.view')
  body.append('scope', 'engage:circulars.view')
  const res = await postToken(server, body.toString())
  t.equal(res.statusCode, 400)
  t.same(res.json(), { error: 'invalid_request', error_description: 'Parameters must not be sent more than once: scope.' })
})

t.test('A5: unknown parameters are ignored', async (t) => {
  const { app: server } = await app(t)
  const res = remember(await postToken(server, form('content-reader', SECRETS.content, { audience: 'x', resource: 'y' }) as Record<string, string>))
  t.equal(res.statusCode, 200)
})

for (const contentType of ['Application/X-WWW-Form-Urlencoded', 'application/x-www-form-urlencoded\t; charset=utf-8', 'application/x-www-form-urlencoded;charset=UTF-8']) {
  t.test(`A8: Content-Type ${JSON.stringify(contentType)} is parsed like the canonical one`, async (t) => {
    const { app: server } = await app(t)
    const res = remember(await postToken(server, form('content-reader', SECRETS.content), { contentType }))
    t.equal(res.statusCode, 200)
  })
}

t.test('A8: GET /oauth/token → 405 with Allow: POST', async (t) => {
  const { app: server } = await app(t)
  const res = await server.inject({ method: 'GET', url: '/oauth/token' })
  t.equal(res.statusCode, 405)
  t.match(res.headers, { ...NO_CACHE, allow: 'POST' })
  t.same(res.json(), { error: 'invalid_request', error_description: 'The token endpoint accepts POST only.' })
})

t.test('a malformed %-escape in the body → 400 invalid_request', async (t) => {
  const { app: server } = await app(t)
  const res = await postToken(server, 'grant_type=client_credentials&client_id=content-reader&client_secret=%E0%A4%A')
  t.equal(res.statusCode, 400)
  t.same(res.json(), { error: 'invalid_request', error_description: 'The request body is not valid application/x-www-form-urlencoded.' })
})

t.test('a body over 16 KiB → 413 before parsing', async (t) => {
  const { app: server } = await app(t)
  const res = await postToken(server, `${new URLSearchParams(form('content-reader', SECRETS.content))}&pad=${'x'.repeat(17 * 1024)}`)
  t.equal(res.statusCode, 413)
  t.same(res.json(), { error: 'invalid_request', error_description: 'The request body is larger than this route accepts.' })
})

// ---------------------------------------------------------------- logs (G5): keep this test last

t.test('G5: no secret, token or Basic value appears in any log line of this file', async (t) => {
  const text = logs.join('')
  t.ok(logs.length > 50, 'requests were logged')
  t.match(text, /token issued/, 'issuance is logged')
  for (const value of sensitive) {
    t.notOk(text.includes(value), `not logged: ${value.slice(0, 12)}…`)
    t.notOk(text.includes(encodeURIComponent(value)), `not logged url-encoded: ${value.slice(0, 12)}…`)
  }
  t.notOk(text.includes('Bearer '), 'no Bearer value')
  t.notOk(text.includes('Basic '), 'no Basic value')
})

function withAccount (base: GatewayConfig, clientId: string, change: (a: GatewayConfig['service_accounts'][number]) => GatewayConfig['service_accounts'][number]): GatewayConfig {
  return { ...base, service_accounts: base.service_accounts.map((a) => a.client_id === clientId ? change(a) : a) }
}
