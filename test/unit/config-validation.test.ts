import t from 'tap'
import { parseGatewayConfig } from '../../src/config/second-pass/load-gateway-config.js'
import type { Catalog } from '../../src/pipeline/registry.js'
import { ConfigError } from '../../src/config/config-error.js'
import type { PolicyPlugin } from '../../src/plugin/policy.js'
import type { ServiceModule } from '../../src/services/service-module.js'

// A small catalog of stand-in policies and one service, so these tests pin the loader's behaviour alone.
const auth: PolicyPlugin = {
  name: 'auth', description: 'test auth', schema: { type: 'object', additionalProperties: false, properties: {} },
  create: () => () => {},
}
const scope: PolicyPlugin<{ all: string[] }> = {
  name: 'scope',
  description: 'test scope',
  schema: { type: 'object', additionalProperties: false, required: ['all'], properties: { all: { type: 'array', items: { type: 'string' } } } },
  requires: () => ['auth'],
  check: (options, settings) => options.all.flatMap((s, i) => settings.scopes.has(s) ? [] : [{ path: `all/${i}`, message: `unknown scope "${s}"` }]),
  create: () => () => {},
}
const svc: ServiceModule = {
  name: 'svc',
  description: 'test service',
  routes: [{ id: 'hello', method: 'GET', url: '/hello', description: 'says hello' }],
  settingsSchema: { greeting: { type: 'string', description: 'what to say' } },
  build: () => ({ handlers: {} }),
}
const catalog: Catalog = { plugins: new Map([['auth', auth], ['scope', scope]]), services: [svc], outside: new Map() }

const HASH = '$scrypt$ln=10,r=8,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'
const base = `issuer:
  issuer: http://localhost:8080
scopes:
  a:read: { description: read }
organizations:
  - id: org_hq
    stores:
      - id: org_store_1
service_accounts:
  - client_id: c1
    organization: org_hq
    scopes: [a:read]
    secrets:
      - { hash: "${HASH}", created: "2026-11-01" }
services:
  svc:
    prefix: /svc
    envelope: plain
    policies:
      - auth: {}
    routes:
      hello:
        - scope: { all: [a:read] }
`

async function problemsOf (text: string, env: NodeJS.ProcessEnv = {}): Promise<{ path: string, line?: number, message: string }[]> {
  try {
    await parseGatewayConfig(text, 'g.yaml', { env: env }, catalog)
  } catch (error) {
    if (error instanceof ConfigError) return error.problems.map((p) => ({ ...p }))
    throw error
  }
  return []
}

t.test('a valid file loads with defaults filled in', async (t) => {
  const { config } = await parseGatewayConfig(base, 'g.yaml', { env: {} }, catalog)
  t.equal(config.server.port, 8080)
  t.same(config.server.trusted_proxies, [])
  t.equal(config.issuer.algorithm, 'EdDSA')
  t.same(config.issuer.token_rate_limit, { points: 60, window_seconds: 60 })
  t.equal(config.service_accounts[0]?.status, 'active')
  t.equal(config.organizations[0]?.stores[0]?.install_active, true)
})

t.test('an unknown key is an error naming its path and line', async (t) => {
  const text = base.replace('  issuer: http://localhost:8080', '  issuer: http://localhost:8080\n  isuer_typo: 1')
  t.same(await problemsOf(text), [{ path: 'issuer.isuer_typo', line: 3, message: 'unknown key "isuer_typo"' }])
})

t.test('a wrong type is an error naming its path and line', async (t) => {
  const text = `server:\n  port: eighty\n${base}`
  t.same(await problemsOf(text), [{ path: 'server.port', line: 2, message: 'must be integer' }])
})

t.test('every error is listed, not only the first', async (t) => {
  const text = `server:\n  port: -1\n  log_level: loud\n${base}`
  const problems = await problemsOf(text)
  t.same(problems.map((p) => p.path).sort(), ['server.log_level', 'server.port'])
  t.same(problems.map((p) => p.line).sort(), [2, 3])
})

t.test('an unknown policy is an error at the policy', async (t) => {
  const text = base.replace('        - scope: { all: [a:read] }', '        - scoep: { all: [a:read] }')
  t.same(await problemsOf(text), [{ path: 'services.svc.routes.hello[0].scoep', line: 23, message: 'unknown policy "scoep" (known: auth, scope)' }])
})

t.test('an unknown scope in a policy is an error', async (t) => {
  const text = base.replace('{ all: [a:read] }', '{ all: [a:write] }')
  t.same(await problemsOf(text), [{ path: 'services.svc.routes.hello[0].scope.all[0]', line: 23, message: 'unknown scope "a:write"' }])
})

t.test('an unknown scope on an account is an error', async (t) => {
  const text = base.replace('    scopes: [a:read]', '    scopes: [a:read, b:write]')
  t.same(await problemsOf(text), [{ path: 'service_accounts[0].scopes[1]', line: 12, message: 'unknown scope "b:write" (declare it under scopes)' }])
})

t.test('bad policy options are checked against the policy\'s own schema', async (t) => {
  const text = base.replace('{ all: [a:read] }', '{ all: [a:read], extra: 1 }')
  t.same(await problemsOf(text), [{ path: 'services.svc.routes.hello[0].scope.extra', line: 23, message: 'unknown option "extra"' }])
})

t.test('a chain in the wrong order is an error', async (t) => {
  const text = base.replace('    policies:\n      - auth: {}\n', '    policies: []\n').replace('        - scope: { all: [a:read] }', '        - scope: { all: [a:read] }\n        - auth: {}')
  t.same(await problemsOf(text), [{ path: 'services.svc.routes.hello[0].scope', line: 22, message: 'policy "scope" must come after "auth" in the chain' }])
})

t.test('an unknown route id is an error', async (t) => {
  const text = base.replace('      hello:\n', '      helo:\n')
  t.same(await problemsOf(text), [{ path: 'services.svc.routes.helo', line: 22, message: 'unknown route "helo" (service svc has: hello)' }])
})

t.test('an unknown service is an error', async (t) => {
  const text = `${base}  other:\n    prefix: /x\n    envelope: plain\n`
  t.same(await problemsOf(text), [{ path: 'services.other', line: 24, message: 'unknown key "other"' }])
})

t.test('a plain secret instead of a hash is an error', async (t) => {
  const text = base.replace(`"${HASH}"`, 'my-plain-secret')
  t.same(await problemsOf(text), [{ path: 'service_accounts[0].secrets[0].hash', line: 14, message: 'not a scrypt PHC hash; create one with `lanegate hash-secret` (never paste a plain secret)' }])
})

t.test('references to unknown organizations and cycles are errors', async (t) => {
  const text = base.replace('    organization: org_hq\n', '    organization: org_nowhere\n')
    .replace('  - id: org_hq\n', '  - id: org_hq\n    parent: org_hq\n')
  t.same((await problemsOf(text)).map((p) => [p.path, p.message]), [
    ['organizations[0].parent', 'organization parents form a cycle'],
    ['service_accounts[0].organization', 'unknown organization "org_nowhere"'],
  ])
})

t.test('${ENV} and ${ENV:-default} are substituted; a lone reference keeps its YAML type', async (t) => {
  const text = `server:\n  port: \${PORT:-9000}\n  host: "\${HOST}"\n  data_dir: /tmp/\${SUB:-x}/d\n${base}`
  const { config } = await parseGatewayConfig(text, 'g.yaml', { env: { HOST: '127.0.0.1' } }, catalog)
  t.equal(config.server.port, 9000)
  t.equal(config.server.host, '127.0.0.1')
  t.equal(config.server.data_dir, '/tmp/x/d')
  const env = (await parseGatewayConfig(text, 'g.yaml', { env: { HOST: 'h', PORT: '81', SUB: 'y' } }, catalog)).config.server
  t.same([env.port, env.host, env.data_dir], [81, 'h', '/tmp/y/d'])
})

t.test('an unset variable without a default is an error', async (t) => {
  const text = `server:\n  host: \${NOPE}\n${base}`
  t.same(await problemsOf(text), [{ path: 'server.host', line: 2, message: 'environment variable NOPE is not set and has no default (write ${NOPE:-default})' }])
})

t.test('YAML syntax errors and duplicate keys are reported with a line', async (t) => {
  const dup = await problemsOf(`server:\n  port: 1\n  port: 2\n${base}`)
  t.equal(dup.length, 1)
  t.equal(dup[0]?.line, 3)
  t.match(dup[0]?.message, /^YAML syntax: Map keys must be unique/)
  const bad = await problemsOf('issuer: [unclosed\n')
  t.ok(bad.length >= 1)
  t.match(bad[0]?.message, /^YAML syntax/)
})

t.test('secrets older than secret_max_age_days are warned about', async (t) => {
  const text = base.replace('created: "2026-11-01"', 'created: "2020-01-01"')
  const { warnings } = await parseGatewayConfig(text, 'g.yaml', { env: {} }, catalog)
  t.same(warnings, [{ path: 'service_accounts[0].secrets[0].created', line: 14, message: 'secret of "c1" is older than 90 days: rotate it' }])
})

t.test('a route without auth is warned about', async (t) => {
  const text = base.replace('    policies:\n      - auth: {}\n', '    policies: []\n').replace('        - scope: { all: [a:read] }', '        []').replace('      hello:\n        []', '      hello: []')
  const { warnings } = await parseGatewayConfig(text, 'g.yaml', { env: {} }, catalog)
  t.same(warnings.map((w) => [w.path, w.message]), [['services.svc.routes.hello', 'route has no auth policy: anyone can call it']])
})

t.test('rate_limit_store.sync_interval_ms: 0 by default, 1–10000 ms with driver redis, an error with its path otherwise', async (t) => {
  const store = (lines: string): string => `rate_limit_store:\n${lines}${base}`
  const { config } = await parseGatewayConfig(base, 'g.yaml', { env: {} }, catalog)
  t.equal(config.rate_limit_store.sync_interval_ms, 0, 'exact (a round trip per request) unless asked')
  const redis = '  driver: redis\n  redis_url: redis://127.0.0.1:6379\n'
  const synced = await parseGatewayConfig(store(`${redis}  sync_interval_ms: 50\n`), 'g.yaml', { env: {} }, catalog)
  t.equal(synced.config.rate_limit_store.sync_interval_ms, 50)
  t.same(await problemsOf(store(`${redis}  sync_interval_ms: -1\n`)), [{ path: 'rate_limit_store.sync_interval_ms', line: 4, message: 'must be >= 0' }])
  t.same(await problemsOf(store(`${redis}  sync_interval_ms: 2.5\n`)), [{ path: 'rate_limit_store.sync_interval_ms', line: 4, message: 'must be integer' }])
  t.same(await problemsOf(store(`${redis}  sync_interval_ms: 60000\n`)), [{ path: 'rate_limit_store.sync_interval_ms', line: 4, message: 'must be <= 10000' }])
  t.same(await problemsOf(store(`${redis}  sync_interval_ms: fast\n`)), [{ path: 'rate_limit_store.sync_interval_ms', line: 4, message: 'must be integer' }])
  t.same(await problemsOf(store('  driver: memory\n  sync_interval_ms: 50\n')), [{
    path: 'rate_limit_store.sync_interval_ms',
    line: 3,
    message: 'only applies to driver redis, or to the memory driver with server.workers > 1 (one process counts every request in itself already)',
  }])
})

const issuerBlock = (extra: string) => `${base}user_token_issuers:
  - issuer: https://sso.retailer.test/realms/stores
    audience: lanegate
    algorithms: [RS256]
${extra}`

t.test('an outside issuer with a claims block loads, as written', async (t) => {
  const text = issuerBlock(`    discovery_url: https://sso.retailer.test/realms/stores/.well-known/openid-configuration
    accept_typ: [JWT]
    claims:
      client_id: azp
      scopes: [{ claim: realm_access.roles }, { claim: scope }]
      organization: { claim: tid, map: { 72f988bf: org_hq } }
      token_type: { claim: kind, map: { person: user, machine: service } }
`)
  const { config } = await parseGatewayConfig(text, 'g.yaml', { env: {} }, catalog)
  t.same(config.user_token_issuers[0]?.claims, {
    client_id: 'azp',
    scopes: [{ claim: 'realm_access.roles' }, { claim: 'scope' }],
    organization: { claim: 'tid', map: { '72f988bf': 'org_hq' } },
    token_type: { claim: 'kind', map: { person: 'user', machine: 'service' } },
  })
  t.same(config.user_token_issuers[0]?.accept_typ, ['JWT'])
})

t.test('an outside issuer\'s claims block and key source are checked with their paths', async (t) => {
  const twoSources = issuerBlock(`    jwks_uri: https://sso.retailer.test/certs
    discovery_url: https://sso.retailer.test/.well-known/openid-configuration
`)
  t.same(await problemsOf(twoSources), [{ path: 'user_token_issuers[0]', line: 25, message: 'give exactly one of jwks, jwks_uri, discovery_url or development_key_dir (or only introspection, for an issuer of opaque tokens only)' }])
  const badTyp = issuerBlock(`    jwks_uri: https://sso.retailer.test/certs
    accept_typ: [id+jwt]
`)
  t.match(await problemsOf(badTyp), [{ path: 'user_token_issuers[0].accept_typ[0]', message: /at\+jwt, JWT/ }])
  const badType = issuerBlock(`    jwks_uri: https://sso.retailer.test/certs
    claims: { scopes: { claim: scope }, organization: { const: org_hq }, token_type: robot }
`)
  const typeProblems = await problemsOf(badType)
  t.ok(typeProblems.length > 0 && typeProblems.every((p) => p.path.startsWith('user_token_issuers[0].claims.token_type')), JSON.stringify(typeProblems))
  const badOrg = issuerBlock(`    jwks_uri: https://sso.retailer.test/certs
    claims: { scopes: { claim: scope }, organization: { const: hq }, token_type: user }
`)
  const orgProblems = await problemsOf(badOrg)
  t.ok(orgProblems.length > 0 && orgProblems.every((p) => p.path.startsWith('user_token_issuers[0].claims.organization')), JSON.stringify(orgProblems))
})

t.test('introspection needs a claims block, and only one issuer may introspect', async (t) => {
  const introspection = '    introspection: { url: https://sso.retailer.test/introspect, client_id: gw, client_secret: s }\n'
  t.same(await problemsOf(issuerBlock(introspection)), [{ path: 'user_token_issuers[0].introspection', line: 28, message: 'needs claims: an introspection answer is read through the issuer\'s claims block' }])
  const claims = '    claims: { scopes: { claim: scope }, organization: { const: org_hq }, token_type: service }\n'
  const one = issuerBlock(introspection + claims)
  const { config } = await parseGatewayConfig(one, 'g.yaml', { env: {} }, catalog)
  t.same(config.user_token_issuers[0]?.introspection, { url: 'https://sso.retailer.test/introspect', client_id: 'gw', client_secret: 's', cache_seconds: 60, timeout_ms: 3000 })
  const two = `${one}  - issuer: https://other.test\n    audience: x\n${introspection}${claims}`
  t.same(await problemsOf(two), [{ path: 'user_token_issuers[1].introspection', line: 32, message: 'only one issuer may introspect: an opaque token does not say whose it is' }])
})
