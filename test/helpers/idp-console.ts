import { countingJsonServer, type CountingServer } from './token-jwks-server.js'
import { gatewayFixture, type GatewayFixture } from './gateway-fixture.js'
import { generateTestKey, mint, type TestKey } from './token-mint.js'

/** The identity provider of the console's token tests: a Keycloak-shaped realm whose keys a JWKS server of the test serves. */
export const IDP_ISSUER = 'https://sso.retailer.test/realms/stores'
/** The admin listener's bearer token (`admin.auth.token_env`), read from the environment when the console mounts. */
export const ADMIN_TOKEN_ENV = 'LANEGATE_TEST_CONSOLE_ADMIN_TOKEN'
export const ADMIN_TOKEN = 'console-token-test-admin-0123456789'

export interface IdpConsole {
  key: TestKey
  jwks: CountingServer
  /** minimal + the realm as a user token issuer (claims block), one proxy service of three routes, admin.auth. */
  fixture: GatewayFixture
  /** A token of `pos-terminal` for `jane` with `roles`, living `lifetime` seconds from `iat` (default now). */
  token (roles: string[], options?: { iat?: number, lifetime?: number }): Promise<string>
}

/** The realm's key and JWKS server (closed at teardown) and the gateway config that trusts it. */
export async function idpConsole (t: { teardown (fn: () => unknown): void }): Promise<IdpConsole> {
  const key = await generateTestKey('kc-1', 'RS256')
  const jwks = await countingJsonServer(() => ({ keys: [key.publicJwk] }))
  t.teardown(() => jwks.close())
  const fixture = gatewayFixture('minimal')
    .set('admin', { port: 0, auth: { token_env: ADMIN_TOKEN_ENV } })
    .set('scopes', { 'pricing:read': { description: 'Read prices' }, 'pricing:write': { description: 'Change prices' } })
    .set('organizations', [{ id: 'org_hq_demo' }])
    .set('user_token_issuers', [{
      issuer: IDP_ISSUER,
      audience: 'lanegate',
      algorithms: ['RS256'],
      jwks_uri: jwks.url,
      accept_typ: ['JWT'],
      claims: { client_id: 'azp', scopes: { claim: 'realm_access.roles' }, organization: { const: 'org_hq_demo' }, token_type: 'user' },
    }])
    .set('services', {
      pricing: {
        type: 'proxy',
        prefix: '/legacy/pricing',
        envelope: 'exchange',
        upstream: { targets: ['http://127.0.0.1:9'] },
        policies: [{ auth: {} }],
        routes: {
          read_price: { methods: ['GET'], path: '/prices/:sku', policies: [{ scope: { all: ['pricing:read'] } }] },
          write_price: { methods: ['PUT'], path: '/prices/:sku', policies: [{ scope: { all: ['pricing:write'] } }] },
          store_prices: { methods: ['GET'], path: '/stores/:store/prices', policies: [{ organization: { param: 'store' } }] },
        },
      },
    })
  return {
    key,
    jwks,
    fixture,
    token: async (roles, options = {}) => {
      const iat = options.iat ?? Math.floor(Date.now() / 1000)
      const claims = { iss: IDP_ISSUER, aud: 'lanegate', sub: 'jane', azp: 'pos-terminal', iat, exp: iat + (options.lifetime ?? 300), jti: `j-${iat}-${roles.join('+')}`, realm_access: { roles } }
      return await mint(key, claims, { header: { typ: 'JWT' } })
    },
  }
}
