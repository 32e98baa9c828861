import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { repoPath } from '../helpers/paths.js'
import { runNode } from '../helpers/run-node.js'
import { countingJsonServer } from '../helpers/token-jwks-server.js'
import { generateTestKey, mint } from '../helpers/token-mint.js'

/**
 * `lanegate explain --token-file -`: a pasted identity-provider token (Keycloak-shaped, keys made at run time and
 * served by a JWKS server of the test) is verified and mapped as the auth policy would, and the chain is explained
 * for the caller it gives; the token itself is printed nowhere.
 */
const issuer = 'https://sso.retailer.test/realms/stores'

t.test('explain --token-file shows the mapped caller of a pasted token and explains the chain for it', async (t) => {
  const key = await generateTestKey('kc-1', 'RS256')
  const jwks = await countingJsonServer(() => ({ keys: [key.publicJwk] }))
  t.teardown(() => jwks.close())
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-explain-token-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const config = join(dir, 'gateway.yaml')
  await writeFile(config, `admin: false
server: { data_dir: ${join(dir, 'data')} }
issuer: { issuer: http://localhost:8080 }
scopes:
  pricing:read: { description: Read prices }
organizations:
  - id: org_hq_demo
user_token_issuers:
  - issuer: ${issuer}
    audience: lanegate
    algorithms: [RS256]
    jwks_uri: ${jwks.url}
    accept_typ: [JWT]
    claims: { client_id: azp, scopes: { claim: realm_access.roles }, organization: { const: org_hq_demo }, token_type: user }
services:
  pricing:
    type: proxy
    prefix: /legacy/pricing
    envelope: exchange
    upstream: { targets: [ "http://127.0.0.1:9" ] }
    policies: [ { auth: {} } ]
    routes:
      read_price: { methods: [GET], path: "/prices/:sku", policies: [ { scope: { all: [pricing:read] } } ] }
`)
  const now = Math.floor(Date.now() / 1000)
  const claims = { iss: issuer, aud: 'lanegate', sub: 'jane', azp: 'pos-terminal', iat: now, exp: now + 300, jti: 'j1', realm_access: { roles: ['pricing:read'] } }
  const explain = async (token: string) => {
    const res = await runNode(repoPath('bin/lanegate.js'), ['explain', '--config', config, '--json', '--token-file', '-', 'GET', '/legacy/pricing/prices/9'], { input: `${token}\n` })
    t.notOk(res.stdout.includes(token) || res.stderr.includes(token), 'the token is printed nowhere')
    return res
  }

  const reader = await explain(await mint(key, claims, { header: { typ: 'JWT' } }))
  t.equal(reader.code, 0, reader.stderr)
  const result = JSON.parse(reader.stdout) as Record<string, unknown>
  t.same(result.caller, { tokenType: 'user', clientId: 'pos-terminal', organizationId: 'org_hq_demo', scopes: ['pricing:read'], subject: 'jane', issuer })
  t.same(result.result, { outcome: 'pass' })

  const noRole = await explain(await mint(key, { ...claims, realm_access: { roles: [] } }, { header: { typ: 'JWT' } }))
  t.equal(noRole.code, 0, noRole.stderr)
  t.match(JSON.parse(noRole.stdout), { caller: { scopes: [] }, result: { outcome: 'refuse', at: 'scope', status: 403, code: 'forbidden' } })

  const expired = await explain(await mint(key, { ...claims, iat: now - 900, exp: now - 600 }, { header: { typ: 'JWT' } }))
  t.equal(expired.code, 1)
  t.equal(expired.stdout, '')
  t.equal(expired.stderr, 'explain: the token is refused: 401 unauthenticated: The access token expired\n')
})
