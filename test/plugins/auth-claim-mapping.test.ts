import t, { type Test } from 'tap'
import { randomUUID } from 'node:crypto'
import auth from '../../plugins/auth/index.js'
import type { UserTokenIssuerConfig } from '../../src/config/types.js'
import { buildPolicyApp, tokenEnv } from '../helpers/token-app.js'
import { countingJsonServer } from '../helpers/token-jwks-server.js'
import { generateTestKey, mint, type TestKey } from '../helpers/token-mint.js'

/**
 * Keycloak- and Entra ID-shaped access tokens mapped to the caller by configuration alone (keys made at run time,
 * served by a JWKS server of the test): their scopes in realm roles or `scp`, the client in `azp`, the tenant in
 * `tid`, and `typ: JWT`.
 */
const keycloakIssuer = 'https://sso.retailer.test/realms/stores'
const tenant = '72f988bf-86f1-41af-91ab-2d7cd011db47'
const entraIssuer = `https://login.microsoftonline.com/${tenant}/v2.0`

async function appWith (tt: Test, issuer: (jwksUrl: string) => UserTokenIssuerConfig, key: TestKey) {
  const jwks = await countingJsonServer(() => ({ keys: [key.publicJwk] }))
  tt.teardown(() => jwks.close())
  const env = await tokenEnv({ extraIssuers: [issuer(jwks.url)] })
  const { app } = buildPolicyApp({ env, routes: [{ url: '/t', chain: [[auth, {}]] }] })
  tt.teardown(() => app.close())
  return async (claims: Record<string, unknown>) => {
    const token = await mint(key, claims, { header: { typ: 'JWT' } })
    return await app.inject({ url: '/t', headers: { authorization: `Bearer ${token}` } })
  }
}

const times = () => {
  const now = Math.floor(Date.now() / 1000)
  return { iat: now, nbf: now, exp: now + 300 }
}

const keycloak = (jwks_uri: string): UserTokenIssuerConfig => ({
  issuer: keycloakIssuer,
  audience: 'lanegate',
  algorithms: ['RS256'],
  jwks_uri,
  accept_typ: ['JWT'],
  max_token_lifetime_seconds: 3600,
  claims: {
    client_id: 'azp',
    scopes: [{ claim: 'realm_access.roles' }, { claim: 'scope' }],
    organization: { claim: 'store_org' },
    token_type: { claim: 'principal_kind', map: { person: 'user', machine: 'service' } },
  },
})

t.test('Keycloak: realm roles and scope become the scopes, azp the client, a claim the organization', async (tt) => {
  const key = await generateTestKey('kc-rsa-1', 'RS256')
  const call = await appWith(tt, keycloak, key)
  const jti = randomUUID()
  const claims = {
    ...times(), jti, iss: keycloakIssuer, aud: ['lanegate', 'account'], sub: 'f1d3c0de-jane', typ: 'Bearer', azp: 'pos-terminal',
    realm_access: { roles: ['engage:content.view', 'offline_access'] }, scope: 'profile email', store_org: 'org_store_a', principal_kind: 'person',
  }
  const res = await call(claims)
  tt.equal(res.statusCode, 200)
  tt.same(res.json(), {
    ok: true,
    principal: {
      tokenType: 'user',
      subject: 'f1d3c0de-jane',
      clientId: 'pos-terminal',
      organizationId: 'org_store_a',
      scopes: ['email', 'engage:content.view', 'offline_access', 'profile'],
      tokenId: jti,
      expiresAt: claims.exp,
      issuer: keycloakIssuer,
    },
  })
  const machine = await call({ ...claims, jti: randomUUID(), principal_kind: 'machine' })
  tt.match(machine.json(), { principal: { tokenType: 'service', clientId: 'pos-terminal' } })
})

t.test('Keycloak: a token whose kind is not in the map, or whose roles are not strings, is refused', async (tt) => {
  const key = await generateTestKey('kc-rsa-1', 'RS256')
  const call = await appWith(tt, keycloak, key)
  const base = { ...times(), jti: randomUUID(), iss: keycloakIssuer, aud: 'lanegate', sub: 'jane', azp: 'pos', realm_access: { roles: ['a'] }, store_org: 'org_store_a', principal_kind: 'person' }
  tt.equal((await call(base)).statusCode, 200)
  for (const [name, edit] of [
    ['unmapped kind', { principal_kind: 'robot' }],
    ['no kind', { principal_kind: undefined }],
    ['roles not strings', { realm_access: { roles: [1, 2] } }],
    ['roles an object', { realm_access: { roles: { a: true } } }],
    ['no client', { azp: undefined }],
    ['organization a number', { store_org: 42 }],
  ] as const) {
    const claims: Record<string, unknown> = { ...base, ...edit, jti: randomUUID() }
    for (const [k, v] of Object.entries(edit)) if (v === undefined) delete claims[k]
    const res = await call(claims)
    tt.equal(res.statusCode, 401, name)
    tt.same(res.json(), { error: 'Unauthenticated.' }, name)
  }
})

const entra = (jwks_uri: string): UserTokenIssuerConfig => ({
  issuer: entraIssuer,
  audience: 'api://lanegate',
  algorithms: ['RS256'],
  jwks_uri,
  accept_typ: ['JWT'],
  max_token_lifetime_seconds: 86400,
  claims: {
    client_id: 'azp',
    token_id: 'uti',
    scopes: [{ claim: 'scp' }, { claim: 'roles' }],
    organization: { claim: 'tid', map: { [tenant]: 'org_parent' } },
    token_type: { claim: 'idtyp', map: { user: 'user', app: 'service' } },
  },
})

t.test('Entra ID: space-separated scp, tid mapped to an organization, uti as the token id', async (tt) => {
  const key = await generateTestKey('entra-1', 'RS256')
  const call = await appWith(tt, entra, key)
  const claims = {
    ...times(), iss: entraIssuer, aud: 'api://lanegate', sub: 'AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ', oid: '00000000-0000-0000-66f3-3332eca7ea81',
    azp: '6e74172b-be56-4843-9ff4-e66a39bb12e3', scp: 'orders.read orders.write', tid: tenant, uti: 'fqiBqXLPj0eQa82S-IYFAA', ver: '2.0', idtyp: 'user',
  }
  const res = await call(claims)
  tt.equal(res.statusCode, 200)
  tt.same(res.json(), {
    ok: true,
    principal: {
      tokenType: 'user',
      subject: claims.sub,
      clientId: claims.azp,
      organizationId: 'org_parent',
      scopes: ['orders.read', 'orders.write'],
      tokenId: 'fqiBqXLPj0eQa82S-IYFAA',
      expiresAt: claims.exp,
      issuer: entraIssuer,
    },
  })
  // An app-only token: roles instead of scp, idtyp app.
  const { scp: _scp, ...appOnly } = claims
  const app = await call({ ...appOnly, uti: 'app-token-1', sub: claims.azp, idtyp: 'app', roles: ['Orders.ReadAll'] })
  tt.match(app.json(), { principal: { tokenType: 'service', subject: claims.azp, scopes: ['Orders.ReadAll'] } })
})

t.test('Entra ID: a tenant not in the map, and an at+jwt-only config given typ JWT, are refused', async (tt) => {
  const key = await generateTestKey('entra-1', 'RS256')
  const call = await appWith(tt, entra, key)
  const base = { ...times(), iss: entraIssuer, aud: 'api://lanegate', sub: 's', azp: 'c', scp: 'a', uti: 'u', idtyp: 'user' }
  const res = await call({ ...base, tid: '11111111-2222-3333-4444-555555555555' })
  tt.equal(res.statusCode, 401)
  tt.same(res.json(), { error: 'Unauthenticated.' })

  const strict = await appWith(tt, (uri) => ({ ...entra(uri), accept_typ: undefined }), key)
  tt.equal((await strict({ ...base, tid: tenant })).statusCode, 401, 'typ JWT refused where only at+jwt is accepted')
})
