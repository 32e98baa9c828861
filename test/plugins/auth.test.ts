import t, { type Test } from 'tap'
import { exportSPKI } from 'jose'
import auth from '../../plugins/auth/index.js'
import { buildPolicyApp, tokenEnv, type TokenEnv } from '../helpers/token-app.js'
import { snapshotOf } from '../helpers/token-config.js'
import {
  generateTestKey, mint, mintHmac, mintNone, serviceClaims, serviceIssuer, userClaims,
} from '../helpers/token-mint.js'
import type { EnvelopeName } from '../../src/plugin/envelope-name.js'
import type { GatewayConfig } from '../../src/config/types.js'

const env: TokenEnv = await tokenEnv()

function appFor (envelope: EnvelopeName = 'plain', options: Record<string, unknown> = {}, testEnv: TokenEnv = env) {
  const built = buildPolicyApp({ env: testEnv, envelope, routes: [{ url: '/t', chain: [[auth, options]] }, { url: '/t', method: 'POST', chain: [[auth, options]] }] })
  t.teardown(() => built.app.close())
  return built
}

const { app } = appFor()
const noError = 'Bearer realm="lanegate"'
const invalid = (description: string) => `Bearer realm="lanegate", error="invalid_token", error_description="${description}"`
const plain401 = { error: 'Unauthenticated.' }

async function call (authorization?: string, url = '/t') {
  return app.inject({ method: 'GET', url, headers: authorization === undefined ? {} : { authorization } })
}

/** Asserts a 401 with the given challenge and the plain body. */
async function rejects (tt: Test, authorization: string | undefined, challenge: string) {
  const res = await call(authorization)
  tt.equal(res.statusCode, 401)
  tt.same(res.json(), plain401)
  tt.equal(res.headers['www-authenticate'], challenge)
}

const valid = await mint(env.serviceKey, serviceClaims())

t.test('a valid service token passes and records the principal', async (tt) => {
  const claims = serviceClaims()
  const token = await mint(env.serviceKey, claims)
  const res = await call(`Bearer ${token}`)
  tt.equal(res.statusCode, 200)
  tt.same(res.json(), {
    ok: true,
    principal: {
      tokenType: 'service',
      subject: 'svc_pay',
      clientId: 'svc_pay',
      organizationId: 'org_parent',
      scopes: ['commerce:payment-intents.create', 'commerce:payment-intents.read'],
      tokenId: claims.jti,
      expiresAt: claims.exp,
      issuer: serviceIssuer,
    },
  })
})

t.test('B1: no Authorization header is a 401 with a bare Bearer challenge', async (tt) => {
  const res = await call()
  tt.equal(res.statusCode, 401)
  tt.same(res.json(), plain401)
  tt.equal(res.headers['www-authenticate'], noError)
  tt.equal(res.headers['cache-control'], 'no-store')
})

t.test('B1: the 401 body in each envelope', async (tt) => {
  const expected: Record<string, unknown> = {
    payments: { success: false, message: 'Unauthenticated.' },
    plain: { error: 'Unauthenticated.' },
    exchange: { error: 'Unauthenticated.' },
  }
  for (const envelope of ['payments', 'plain', 'exchange'] as const) {
    const built = appFor(envelope)
    const missing = await built.app.inject({ url: '/t' })
    tt.same(missing.json(), expected[envelope], `${envelope}: missing token`)
    const bad = await built.app.inject({ url: '/t', headers: { authorization: 'Bearer a.b.c' } })
    tt.same(bad.json(), expected[envelope], `${envelope}: invalid token`)
    tt.equal(bad.headers['www-authenticate'], invalid('The access token is malformed'))
  }
})

t.test('B2: Basic and other schemes are treated as no credentials', async (tt) => {
  await rejects(tt, 'Basic c3ZjX3BheTpzZWNyZXQ=', noError)
  await rejects(tt, `Token ${valid}`, noError)
  await rejects(tt, 'Bearer', noError)
  await rejects(tt, 'Bearer   ', noError)
  await rejects(tt, valid, noError)
})

t.test('B2: the Bearer scheme is case-insensitive', async (tt) => {
  for (const scheme of ['bearer', 'BEARER', 'BeArEr']) {
    const res = await call(`${scheme} ${valid}`)
    tt.equal(res.statusCode, 200, scheme)
  }
})

t.test('B3: malformed tokens are 401 invalid_token, never 500', async (tt) => {
  const notJsonHeader = `${Buffer.from('not json').toString('base64url')}.${Buffer.from('{}').toString('base64url')}.c2ln`
  const cases = {
    'two segments': 'eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJ4In0',
    'bad base64url': 'eyJh!GciOiJFZERTQSJ9.e30.c2ln',
    '8 KB of garbage': 'A'.repeat(8 * 1024),
    'header not JSON': notJsonHeader,
    'three dots': 'a.b.c.d',
  }
  for (const [name, token] of Object.entries(cases)) {
    const res = await call(`Bearer ${token}`)
    tt.equal(res.statusCode, 401, name)
    tt.same(res.json(), plain401, name)
    tt.equal(res.headers['www-authenticate'], invalid('The access token is malformed'), name)
  }
})

t.test('B4: expired, not-yet-valid and string exp are rejected', async (tt) => {
  const now = Math.floor(Date.now() / 1000)
  await rejects(tt, `Bearer ${await mint(env.serviceKey, serviceClaims(), { claims: { exp: now - 60, iat: now - 3600 } })}`, invalid('The access token expired'))
  await rejects(tt, `Bearer ${await mint(env.serviceKey, serviceClaims(), { claims: { nbf: now + 600 } })}`, invalid('The access token is invalid'))
  await rejects(tt, `Bearer ${await mint(env.serviceKey, serviceClaims(), { claims: { exp: '9999999999' } })}`, invalid('The access token is invalid'))
})

t.test('B4: an expiry within the clock tolerance still passes', async (tt) => {
  const now = Math.floor(Date.now() / 1000)
  const res = await call(`Bearer ${await mint(env.serviceKey, serviceClaims(), { claims: { exp: now - 1 } })}`)
  tt.equal(res.statusCode, 200)
})

t.test('B5: each required claim missing is a 401', async (tt) => {
  for (const claim of ['exp', 'iat', 'jti', 'sub', 'client_id', 'aud', 'iss', 'scope', 'organization_id', 'token_type']) {
    const res = await call(`Bearer ${await mint(env.serviceKey, serviceClaims(), { claims: { [claim]: undefined } })}`)
    tt.equal(res.statusCode, 401, claim)
    tt.same(res.json(), plain401, claim)
  }
})

t.test('B5: claims of the wrong type are a 401', async (tt) => {
  for (const [claim, value] of Object.entries({ scope: ['a'], organization_id: 42, client_id: 7, sub: 1, jti: {} })) {
    const res = await call(`Bearer ${await mint(env.serviceKey, serviceClaims(), { claims: { [claim]: value } })}`)
    tt.equal(res.statusCode, 401, claim)
  }
})

t.test('B6: alg none, HS256 over the public key and algorithms off the allow-list are rejected', async (tt) => {
  await rejects(tt, `Bearer ${mintNone(serviceClaims(), env.serviceKey.kid)}`, invalid('The access token is invalid'))
  const pem = await exportSPKI(env.serviceKey.publicKey)
  await rejects(tt, `Bearer ${await mintHmac(new TextEncoder().encode(pem), serviceClaims(), env.serviceKey.kid)}`, invalid('The access token is invalid'))
  const ecKey = await generateTestKey(env.serviceKey.kid, 'ES256')
  await rejects(tt, `Bearer ${await mint(ecKey, serviceClaims())}`, invalid('The access token is invalid'))
})

t.test('B7: typ must be at+jwt (application/ prefix allowed)', async (tt) => {
  await rejects(tt, `Bearer ${await mint(env.serviceKey, serviceClaims(), { header: { typ: 'JWT' } })}`, invalid('The access token is invalid'))
  await rejects(tt, `Bearer ${await mint(env.serviceKey, serviceClaims(), { header: { typ: undefined } })}`, invalid('The access token is invalid'))
  const res = await call(`Bearer ${await mint(env.serviceKey, serviceClaims(), { header: { typ: 'application/at+jwt' } })}`)
  tt.equal(res.statusCode, 200)
})

t.test('B8: wrong issuer or audience is a 401', async (tt) => {
  await rejects(tt, `Bearer ${await mint(env.serviceKey, serviceClaims(), { claims: { iss: `${serviceIssuer}/` } })}`, invalid('The access token is invalid'))
  await rejects(tt, `Bearer ${await mint(env.serviceKey, serviceClaims(), { claims: { iss: 'https://evil.test' } })}`, invalid('The access token is invalid'))
  await rejects(tt, `Bearer ${await mint(env.serviceKey, serviceClaims(), { claims: { aud: 'https://other.api' } })}`, invalid('The access token is invalid'))
  await rejects(tt, `Bearer ${await mint(env.serviceKey, serviceClaims(), { claims: { aud: undefined } })}`, invalid('The access token is invalid'))
})

t.test('B9: hostile kid values are a 401', async (tt) => {
  for (const kid of ['../../dev/null', '\' OR 1=1--', 'k'.repeat(4096), 'unknown-kid']) {
    const res = await call(`Bearer ${await mint(env.serviceKey, serviceClaims(), { header: { kid } })}`)
    tt.equal(res.statusCode, 401, kid.slice(0, 20))
    tt.same(res.json(), plain401)
  }
})

t.test('B9: jku, x5u and embedded jwk headers are ignored and never fetched', async (tt) => {
  const { countingJsonServer } = await import('../helpers/token-jwks-server.js')
  const attacker = await generateTestKey('attacker')
  const server = await countingJsonServer(() => ({ keys: [attacker.publicJwk] }))
  tt.teardown(() => server.close())
  const header = { jku: server.url, x5u: server.url, jwk: attacker.publicJwk }
  for (const kid of ['attacker', env.serviceKey.kid]) {
    const token = await mint(attacker, serviceClaims(), { header: { ...header, kid } })
    const res = await call(`Bearer ${token}`)
    tt.equal(res.statusCode, 401, kid)
  }
  tt.equal(server.hits(), 0)
})

t.test('B10: an unknown crit header parameter is a 401', async (tt) => {
  const token = await mint(env.serviceKey, serviceClaims(), { header: { crit: ['x-policy'], 'x-policy': 1 }, crit: { 'x-policy': true } })
  await rejects(tt, `Bearer ${token}`, invalid('The access token is invalid'))
})

t.test('B12: a user token passes as a user principal', async (tt) => {
  const res = await call(`Bearer ${await mint(env.userKey, userClaims())}`)
  tt.equal(res.statusCode, 200)
  tt.match(res.json(), { principal: { tokenType: 'user', subject: 'user_42', issuer: 'https://users.test' } })
})

t.test('B12: no token passes both profiles', async (tt) => {
  const cases = {
    'user issuer, token_type service': await mint(env.userKey, userClaims(), { claims: { token_type: 'service' } }),
    'gateway issuer, token_type user': await mint(env.serviceKey, serviceClaims(), { claims: { token_type: 'user' } }),
    'user claims signed by the gateway key': await mint(env.serviceKey, userClaims()),
    'service claims signed by the user issuer key': await mint(env.userKey, serviceClaims()),
    'user token with the gateway audience': await mint(env.userKey, userClaims(), { claims: { aud: env.config.issuer.audience } }),
  }
  for (const [name, token] of Object.entries(cases)) {
    const res = await call(`Bearer ${token}`)
    tt.equal(res.statusCode, 401, name)
  }
})

t.test('B13: a token only in the query string or body is ignored', async (tt) => {
  await rejects(tt, undefined, noError)
  const query = await app.inject({ url: `/t?access_token=${valid}` })
  tt.equal(query.statusCode, 401)
  tt.equal(query.headers['www-authenticate'], noError)
  const body = await app.inject({ method: 'POST', url: '/t', payload: `access_token=${valid}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } })
  tt.equal(body.statusCode, 401)
  tt.equal(body.headers['www-authenticate'], noError)
})

t.test('B13: a header token plus a query token is a 400', async (tt) => {
  const plainRes = await app.inject({ url: `/t?access_token=${valid}`, headers: { authorization: `Bearer ${valid}` } })
  tt.equal(plainRes.statusCode, 400)
  tt.same(plainRes.json(), { error: 'bad_request', message: 'Send the access token in the Authorization header only.' })
  const payments = appFor('payments')
  const res = await payments.app.inject({ url: '/t?access_token=x', headers: { authorization: `Bearer ${valid}` } })
  tt.same(res.json(), { success: false, message: 'Send the access token in the Authorization header only.' })
})

t.test('B14: a cached token of an account revoked by a reload stops working', async (tt) => {
  const local = appFor()
  const token = await mint(env.serviceKey, serviceClaims())
  tt.equal((await local.app.inject({ url: '/t', headers: { authorization: `Bearer ${token}` } })).statusCode, 200)
  const revoked = structuredClone(env.config)
  ;(revoked.service_accounts.find((a) => a.client_id === 'svc_pay') as { status: string }).status = 'revoked'
  local.setSnapshot(snapshotOf(revoked))
  const res = await local.app.inject({ url: '/t', headers: { authorization: `Bearer ${token}` } })
  tt.equal(res.statusCode, 401)
  tt.same(res.json(), plain401)
  tt.equal(res.headers['www-authenticate'], invalid('The client has been revoked'))
})

t.test('B14: a deleted account and a token of a revoked account are rejected', async (tt) => {
  const local = appFor()
  const deleted = structuredClone(env.config)
  deleted.service_accounts = deleted.service_accounts.filter((a) => a.client_id !== 'svc_pay')
  local.setSnapshot(snapshotOf(deleted))
  const gone = await local.app.inject({ url: '/t', headers: { authorization: `Bearer ${valid}` } })
  tt.equal(gone.statusCode, 401)
  const revokedToken = await mint(env.serviceKey, serviceClaims('svc_revoked'))
  const res = await call(`Bearer ${revokedToken}`)
  tt.equal(res.statusCode, 401)
  tt.equal(res.headers['www-authenticate'], invalid('The client has been revoked'))
})

t.test('a scope removed from the account by a reload is removed from its live tokens', async (tt) => {
  const local = appFor()
  const narrowed = structuredClone(env.config)
  ;(narrowed.service_accounts.find((a) => a.client_id === 'svc_pay') as { scopes: string[] }).scopes = ['commerce:payment-intents.read']
  local.setSnapshot(snapshotOf(narrowed))
  const res = await local.app.inject({ url: '/t', headers: { authorization: `Bearer ${valid}` } })
  tt.equal(res.statusCode, 200)
  tt.same(res.json().principal.scopes, ['commerce:payment-intents.read'])
})

t.test('an account moved to another organization invalidates its tokens', async (tt) => {
  const local = appFor()
  const moved = structuredClone(env.config)
  ;(moved.service_accounts.find((a) => a.client_id === 'svc_pay') as { organization: string }).organization = 'org_other'
  local.setSnapshot(snapshotOf(moved))
  const res = await local.app.inject({ url: '/t', headers: { authorization: `Bearer ${valid}` } })
  tt.equal(res.statusCode, 401)
})

t.test('failures are not cached: a tampered token fails, the genuine one still passes', async (tt) => {
  const token = await mint(env.serviceKey, serviceClaims())
  const [head, payload, signature] = token.split('.') as [string, string, string]
  const tampered = `${head}.${payload}.${signature.startsWith('A') ? 'B' : 'A'}${signature.slice(1)}`
  tt.equal((await call(`Bearer ${tampered}`)).statusCode, 401)
  tt.equal((await call(`Bearer ${token}`)).statusCode, 200)
  tt.equal((await call(`Bearer ${tampered}`)).statusCode, 401)
})

t.test('a cached token is checked for expiry again on every hit', async (tt) => {
  const now = Math.floor(Date.now() / 1000)
  const lenient = structuredClone(env.config)
  lenient.issuer.clock_tolerance_seconds = 120
  const strict: GatewayConfig = { ...lenient, issuer: { ...lenient.issuer, clock_tolerance_seconds: 0 } }
  const token = await mint(env.serviceKey, serviceClaims(), { claims: { exp: now - 30 } })
  const first = await env.shared.tokens.verify(token, lenient, snapshotOf(lenient).indexes)
  tt.equal(first.clientId, 'svc_pay')
  await tt.rejects(env.shared.tokens.verify(token, strict, snapshotOf(strict).indexes), { code: 'unauthenticated', headers: { 'WWW-Authenticate': invalid('The access token expired') } })
})

t.test('a reload that removes a user issuer rejects its cached tokens', async (tt) => {
  const token = await mint(env.userKey, userClaims())
  await env.shared.tokens.verify(token, env.config, env.snapshot.indexes)
  const without = { ...env.config, user_token_issuers: [] }
  await tt.rejects(env.shared.tokens.verify(token, without, snapshotOf(without).indexes), { code: 'unauthenticated' })
})

t.test('the realm option names the challenge realm', async (tt) => {
  const local = appFor('plain', { realm: 'payments' })
  const missing = await local.app.inject({ url: '/t' })
  tt.equal(missing.headers['www-authenticate'], 'Bearer realm="payments"')
  const bad = await local.app.inject({ url: '/t', headers: { authorization: `Bearer ${mintNone(serviceClaims(), 'x')}` } })
  tt.equal(bad.headers['www-authenticate'], 'Bearer realm="payments", error="invalid_token", error_description="The access token is invalid"')
  const malformed = await local.app.inject({ url: '/t', headers: { authorization: 'Bearer a.b' } })
  tt.equal(malformed.headers['www-authenticate'], 'Bearer realm="payments", error="invalid_token", error_description="The access token is malformed"')
})
