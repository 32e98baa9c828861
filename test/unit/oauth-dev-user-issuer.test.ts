import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose'
import type { UserTokenIssuerConfig } from '../../src/config/types.js'
import { loadDevUserIssuer } from '../../src/oauth/dev-user-issuer.js'

const issuerConfig: UserTokenIssuerConfig = { issuer: 'https://users.lanegate.test', audience: 'lanegate', algorithms: ['EdDSA'], development_key_dir: 'dev-users', max_token_lifetime_seconds: 86400 }

t.test('generates an EdDSA key on first use, reuses it after, and mints verifiable user tokens', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'lanegate-dev-users-'))
  t.teardown(() => rm(root, { recursive: true, force: true }))
  const dir = join(root, 'dev-users')
  const issuer = await loadDevUserIssuer(dir)
  t.equal((await readdir(dir)).filter((f) => f.endsWith('.pem')).length, 1)
  t.equal((await loadDevUserIssuer(dir)).kid, issuer.kid, 'loaded again, same key')
  t.same(issuer.jwks(), { keys: [{ kty: 'OKP', crv: 'Ed25519', x: issuer.jwks().keys[0]!.x, kid: issuer.kid, use: 'sig', alg: 'EdDSA' }] })

  const minted = await issuer.mintUserToken({ issuerConfig, sub: 'user-42', organizationId: 'org_acme', scopes: ['exchange:live.read', 'exchange:live.read'], lifetimeSeconds: 600 })
  t.same(decodeProtectedHeader(minted.token), { alg: 'EdDSA', kid: issuer.kid, typ: 'at+jwt' })
  const { payload } = await jwtVerify(minted.token, createLocalJWKSet(issuer.jwks()), {
    algorithms: ['EdDSA'], typ: 'at+jwt', issuer: issuerConfig.issuer, audience: 'lanegate',
  })
  t.same(payload, {
    iss: 'https://users.lanegate.test',
    sub: 'user-42',
    aud: 'lanegate',
    iat: minted.issuedAt,
    exp: minted.issuedAt + 600,
    jti: minted.jti,
    client_id: 'lanegate-dev-user',
    scope: 'exchange:live.read',
    scopes: ['exchange:live.read'],
    organization_id: 'org_acme',
    token_type: 'user',
  })
  t.equal(minted.expiresAt, minted.issuedAt + 600)
})

t.test('client id and lifetime default, or follow the options', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'lanegate-dev-users-'))
  t.teardown(() => rm(root, { recursive: true, force: true }))
  const issuer = await loadDevUserIssuer(root)
  const a = await issuer.mintUserToken({ issuerConfig, sub: 'u', organizationId: 'org_x', scopes: [] })
  t.equal(a.expiresAt - a.issuedAt, 3600)
  const b = await issuer.mintUserToken({ issuerConfig, sub: 'u', organizationId: 'org_x', scopes: ['a'], clientId: 'pos-app' })
  const { payload } = await jwtVerify(b.token, createLocalJWKSet(issuer.jwks()), { algorithms: ['EdDSA'] })
  t.equal(payload.client_id, 'pos-app')
})
