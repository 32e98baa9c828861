import { rm } from 'node:fs/promises'
import t from 'tap'
import { decodeJwt } from 'jose'
import { buildOauthApp, postToken } from '../helpers/oauth-app.js'
import { buildOauthConfig, SECRETS } from '../helpers/oauth-config.js'

const config = await buildOauthConfig()
t.teardown(() => rm(config.server.data_dir, { recursive: true, force: true }))

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k', 'oth']

t.test('C4: RFC 8414 metadata, issuer equal to the token iss, grant types and auth methods explicit', async (t) => {
  const built = await buildOauthApp({ config })
  t.teardown(() => built.close())
  const res = await built.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' })
  t.equal(res.statusCode, 200)
  t.match(res.headers, { 'cache-control': 'public, max-age=300', 'content-type': 'application/json; charset=utf-8' })
  t.same(res.json(), {
    issuer: 'https://auth.lanegate.test',
    token_endpoint: 'https://auth.lanegate.test/oauth/token',
    jwks_uri: 'https://auth.lanegate.test/.well-known/jwks.json',
    grant_types_supported: ['client_credentials'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    scopes_supported: Object.keys(config.scopes),
    response_types_supported: [],
  })
  const token = await postToken(built.app, { grant_type: 'client_credentials', client_id: 'checkout', client_secret: SECRETS.checkout })
  t.equal(decodeJwt(token.json().access_token).iss, res.json().issuer)
})

t.test('C4: an issuer with a trailing slash is kept exactly; endpoint URLs get no double slash', async (t) => {
  const built = await buildOauthApp({ config: { ...config, issuer: { ...config.issuer, issuer: 'https://auth.lanegate.test/tenant/' } } })
  t.teardown(() => built.close())
  const body = (await built.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' })).json()
  t.equal(body.issuer, 'https://auth.lanegate.test/tenant/')
  t.equal(body.token_endpoint, 'https://auth.lanegate.test/tenant/oauth/token')
  t.equal(body.jwks_uri, 'https://auth.lanegate.test/tenant/.well-known/jwks.json')
})

t.test('metadata follows a config reload', async (t) => {
  const built = await buildOauthApp({ config })
  t.teardown(() => built.close())
  built.setConfig({ ...config, issuer: { ...config.issuer, issuer: 'https://id.example.com' } })
  t.equal((await built.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' })).json().issuer, 'https://id.example.com')
})

t.test('C3: the JWKS lists the public keys only, each with kid, use:sig and alg', async (t) => {
  const built = await buildOauthApp({ config })
  t.teardown(() => built.close())
  const res = await built.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['cache-control'], 'public, max-age=60')
  const { keys } = res.json()
  t.same(keys, [{ kty: 'OKP', crv: 'Ed25519', x: keys[0].x, kid: built.keys.signing.kid, use: 'sig', alg: 'EdDSA' }])
  for (const member of PRIVATE_MEMBERS) t.notOk(member in keys[0], `no ${member}`)
})
