import { countingJsonServer } from './token-jwks-server.js'
import { generateTestKey, mint, type TestKey } from './token-mint.js'
import { GatewayFixture } from './gateway-fixture.js'
import { startBackend, type Backend } from './upstream-servers.js'

interface Teardown { teardown (fn: () => unknown): void }

const ISSUER = 'https://sso.split.test'

/**
 * A proxy block `pricing` with two target groups (`legacy`, `next`: real backends on port 0 answering their own
 * name) behind an outside issuer whose tokens the test mints itself: any number of distinct clients (`azp`) for
 * the price of a signature each, where the token endpoint would cost a scrypt check per client.
 */
export interface SplitGateway {
  fixture: GatewayFixture
  legacy: Backend
  next: Backend
  token (clientId: string, organization?: string): Promise<string>
}

export async function splitGateway (t: Teardown): Promise<SplitGateway> {
  const key: TestKey = await generateTestKey('split-1', 'EdDSA')
  const jwks = await countingJsonServer(() => ({ keys: [key.publicJwk] }))
  t.teardown(() => jwks.close())
  const legacy = await startBackend(t, 'legacy')
  const next = await startBackend(t, 'next')
  const fixture = GatewayFixture.parse(`admin: { port: 0 }
issuer: { issuer: http://localhost:8080 }
scopes:
  pricing:read: { description: Read prices }
organizations:
  - id: org_hq
    stores: [ { id: org_store_1 }, { id: org_store_2 } ]
  - id: org_other
user_token_issuers:
  - issuer: ${ISSUER}
    audience: lanegate
    algorithms: [EdDSA]
    jwks_uri: ${jwks.url}
    claims: { client_id: azp, scopes: { claim: roles }, organization: { claim: org }, token_type: user }
services:
  pricing:
    type: proxy
    prefix: /legacy/pricing
    envelope: exchange
    upstreams:
      legacy: { targets: [ "${legacy.url}" ] }
      next: { targets: [ "${next.url}" ] }
    split:
      rules:
        - { match: { header: { name: x-pricing-next, values: ["1"] } }, upstream: next }
      weights: { legacy: 90, next: 10 }
      sticky: client
    policies: [ { auth: {} }, { scope: { all: [pricing:read] } } ]
    routes:
      read_price: { methods: [GET], path: "/prices/:sku" }
      store_prices:
        methods: [GET]
        path: /stores/:store_org_id/prices
        policies: [ { organization: { param: store_org_id } } ]
        split: { rules: [ { match: { stores: [org_store_2] }, upstream: next } ], weights: { legacy: 1 } }
`)
  const now = Math.floor(Date.now() / 1000)
  const token = async (clientId: string, organization = 'org_hq'): Promise<string> => mint(key, {
    iss: ISSUER, aud: 'lanegate', sub: `user-${clientId}`, azp: clientId, org: organization, roles: ['pricing:read'], iat: now, exp: now + 600, jti: clientId,
  })
  return { fixture, legacy, next, token }
}
