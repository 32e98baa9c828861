import t, { type Test } from 'tap'
import { decodeJwt, exportSPKI, importJWK, SignJWT, type JWTPayload } from 'jose'
import auth from '../../plugins/auth/index.js'
import type { UserTokenIssuerConfig } from '../../src/config/types.js'
import { buildPolicyApp, tokenEnv } from '../helpers/token-app.js'
import { generateTestKey, mintHmac, mintNone } from '../helpers/token-mint.js'
import { jwtResource, otherApp, startTestProvider, type TestProvider } from '../helpers/oidc-provider.js'

/**
 * Tokens of a real OpenID provider (node-oidc-provider, keys made at run time) through `auth`: the issuer is
 * configured by its discovery URL, and a claims block maps its client-credentials tokens (scope, client_id,
 * its own `tenant` claim) to the caller.
 */
const invalid = (description: string) => `Bearer realm="lanegate", error="invalid_token", error_description="${description}"`
const plain401 = { error: 'Unauthenticated.' }

function providerIssuer (provider: TestProvider, edit: Partial<UserTokenIssuerConfig> = {}): UserTokenIssuerConfig {
  return {
    issuer: provider.issuer,
    audience: jwtResource,
    algorithms: ['RS256'],
    discovery_url: provider.discoveryUrl,
    max_token_lifetime_seconds: 3600,
    claims: { scopes: { claim: 'scope' }, organization: { claim: 'tenant' }, token_type: 'service' },
    ...edit,
  }
}

async function setUp (tt: Test, edit: Partial<UserTokenIssuerConfig> = {}) {
  const provider = await startTestProvider()
  tt.teardown(() => provider.close())
  const env = await tokenEnv({ extraIssuers: [providerIssuer(provider, edit)] })
  const { app } = buildPolicyApp({ env, routes: [{ url: '/t', chain: [[auth, {}]] }] })
  tt.teardown(() => app.close())
  const call = async (token: string) => await app.inject({ url: '/t', headers: { authorization: `Bearer ${token}` } })
  return { provider, call }
}

/** A token with the provider's real claims, edited and signed again with the provider's key (or another). */
async function resigned (provider: TestProvider, token: string, edit: { claims?: JWTPayload, header?: Record<string, unknown> } = {}): Promise<string> {
  const key = await importJWK(provider.privateJwk, 'RS256')
  return await new SignJWT({ ...decodeJwt(token), ...edit.claims })
    .setProtectedHeader({ alg: 'RS256', kid: provider.publicJwk.kid, typ: 'at+jwt', ...edit.header })
    .sign(key)
}

t.test('a client-credentials JWT of the provider becomes the caller its claims block maps', async (tt) => {
  const { provider, call } = await setUp(tt)
  const token = await provider.token(jwtResource, 'orders.read orders.write')
  const claims = decodeJwt(token)
  const res = await call(token)
  tt.equal(res.statusCode, 200)
  tt.same(res.json(), {
    ok: true,
    principal: {
      tokenType: 'service',
      subject: 'shop-app',
      clientId: 'shop-app',
      organizationId: 'org_parent',
      scopes: ['orders.read', 'orders.write'],
      tokenId: claims.jti,
      expiresAt: claims.exp,
      issuer: provider.issuer,
    },
  })
  tt.equal(provider.hits('/.well-known/openid-configuration'), 1)
  tt.equal(provider.hits('/jwks'), 1)
  // Another client's token: its own client id, no second discovery or key fetch.
  const other = await call(await provider.token(jwtResource, 'orders.read', otherApp))
  tt.match(other.json(), { principal: { clientId: 'other-app', subject: 'other-app', scopes: ['orders.read'] } })
  tt.equal(provider.hits('/.well-known/openid-configuration'), 1)
  tt.equal(provider.hits('/jwks'), 1)
})

t.test('a token of the provider for another resource (audience) is refused', async (tt) => {
  const { provider, call } = await setUp(tt)
  const res = await call(await provider.token('https://other-api.shop.test'))
  tt.equal(res.statusCode, 401)
  tt.same(res.json(), plain401)
  tt.equal(res.headers['www-authenticate'], invalid('The access token is invalid'))
})

t.test('an expired token of the provider is refused as expired', async (tt) => {
  const { provider, call } = await setUp(tt)
  const now = Math.floor(Date.now() / 1000)
  const res = await call(await resigned(provider, await provider.token(jwtResource), { claims: { iat: now - 1200, exp: now - 600 } }))
  tt.equal(res.statusCode, 401)
  tt.same(res.json(), plain401)
  tt.equal(res.headers['www-authenticate'], invalid('The access token expired'))
})

t.test('typ: a JWT-typed token is refused unless accept_typ lists JWT', async (tt) => {
  const strict = await setUp(tt)
  const token = await resigned(strict.provider, await strict.provider.token(jwtResource), { header: { typ: 'JWT' } })
  const refused = await strict.call(token)
  tt.equal(refused.statusCode, 401)
  tt.equal(refused.headers['www-authenticate'], invalid('The access token is invalid'))
  const noTyp = await strict.call(await resigned(strict.provider, await strict.provider.token(jwtResource), { header: { typ: undefined } }))
  tt.equal(noTyp.statusCode, 401, 'a token without typ is refused')

  const lenient = await setUp(tt, { accept_typ: ['at+jwt', 'JWT'] })
  const jwtTyped = await lenient.call(await resigned(lenient.provider, await lenient.provider.token(jwtResource), { header: { typ: 'JWT' } }))
  tt.equal(jwtTyped.statusCode, 200)
  const idToken = await lenient.call(await resigned(lenient.provider, await lenient.provider.token(jwtResource), { header: { typ: 'dpop+jwt' } }))
  tt.equal(idToken.statusCode, 401, 'a typ not listed is still refused')
})

t.test('an unknown kid is refused after one key fetch, and a flood of them fetches no more', async (tt) => {
  const { provider, call } = await setUp(tt)
  const stranger = await generateTestKey('stranger', 'RS256')
  const claims = decodeJwt(await provider.token(jwtResource))
  const forged = await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'not-published', typ: 'at+jwt' }).sign(stranger.privateKey)
  const res = await call(forged)
  tt.equal(res.statusCode, 401)
  tt.same(res.json(), plain401)
  tt.equal(provider.hits('/jwks'), 1, 'the key set was fetched once to look for the kid')
  for (let i = 0; i < 5; i++) {
    const again = await new SignJWT({ ...claims, jti: `flood-${i}` }).setProtectedHeader({ alg: 'RS256', kid: `not-published-${i}`, typ: 'at+jwt' }).sign(stranger.privateKey)
    tt.equal((await call(again)).statusCode, 401)
  }
  tt.equal(provider.hits('/jwks'), 1, 'no refetch within the cooldown')
})

t.test('alg none and an HS256 token signed with the provider\'s public key are refused', async (tt) => {
  const { provider, call } = await setUp(tt)
  const claims = decodeJwt(await provider.token(jwtResource))
  const none = await call(mintNone(claims, provider.publicJwk.kid as string))
  tt.equal(none.statusCode, 401)
  tt.same(none.json(), plain401)
  const pem = await exportSPKI(await importJWK(provider.publicJwk, 'RS256') as CryptoKey)
  for (const secret of [pem, JSON.stringify(provider.publicJwk)]) {
    const hmac = await call(await mintHmac(new TextEncoder().encode(secret), claims, provider.publicJwk.kid as string))
    tt.equal(hmac.statusCode, 401)
    tt.same(hmac.json(), plain401)
  }
})

t.test('a token without the organization claim the mapping names is refused', async (tt) => {
  const { provider, call } = await setUp(tt, { claims: { scopes: { claim: 'scope' }, organization: { claim: 'store_org' }, token_type: 'service' } })
  const res = await call(await provider.token(jwtResource))
  tt.equal(res.statusCode, 401)
  tt.equal(res.headers['www-authenticate'], invalid('The access token is invalid'))
})

t.test('without a claims block the provider\'s tokens must be in lanegate\'s own profile, and are refused', async (tt) => {
  const { provider, call } = await setUp(tt, { claims: undefined })
  const res = await call(await provider.token(jwtResource))
  tt.equal(res.statusCode, 401)
})

t.test('a discovery document that names another issuer is not trusted', async (tt) => {
  const provider = await startTestProvider()
  tt.teardown(() => provider.close())
  const env = await tokenEnv({ extraIssuers: [providerIssuer(provider, { issuer: 'https://impostor.test', discovery_url: provider.discoveryUrl })] })
  const { app } = buildPolicyApp({ env, routes: [{ url: '/t', chain: [[auth, {}]] }] })
  tt.teardown(() => app.close())
  const token = await resigned(provider, await provider.token(jwtResource), { claims: { iss: 'https://impostor.test' } })
  const res = await app.inject({ url: '/t', headers: { authorization: `Bearer ${token}` } })
  tt.equal(res.statusCode, 401)
  tt.equal(provider.hits('/jwks'), 0, 'no key of the other issuer was fetched')
})
