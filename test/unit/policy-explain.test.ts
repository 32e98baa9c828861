import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { gatewaySettings } from '../../src/config/gateway-settings.js'
import { ConfigError } from '../../src/config/config-error.js'
import type { ExplainRequest } from '../../src/plugin/policy.js'
import { loadGatewayConfig, parseGatewayConfig } from '../../src/config/second-pass/load-gateway-config.js'
import { policyPlugins } from '../../src/pipeline/registry.js'
import { gatewayFixture } from '../helpers/gateway-fixture.js'
import { repoPath } from '../helpers/paths.js'

const { config } = await loadGatewayConfig(repoPath('gateway.yaml'))
const request: ExplainRequest = {
  settings: gatewaySettings(config),
  service: 'content',
  routeId: 'content_list',
  method: 'GET',
  path: '/public/v1/content',
  params: {},
  caller: { tokenType: 'service', subject: 'demo-content', clientId: 'demo-content', organizationId: 'org_hq_demo', scopes: new Set(['engage:content.view']), tokenId: '', expiresAt: 0, issuer: '' },
  authenticated: true,
}

function explain (name: string, options: unknown, asked: ExplainRequest = request) {
  const plugin = policyPlugins.get(name)
  if (plugin?.explain === undefined) throw new Error(`${name} has no explain`)
  return plugin.explain(options, asked)
}

t.test('every bundled policy explains itself', async (t) => {
  t.same([...policyPlugins.values()].filter((p) => p.explain === undefined).map((p) => p.name), [])
})

t.test('cors and headers never refuse', async (t) => {
  t.same(explain('cors', { origins: ['https://shop.example'], methods: ['GET'], headers: [], credentials: false }), {
    outcome: 'pass', note: 'never refuses; allows browsers on https://shop.example and answers their preflights',
  })
  t.same(explain('headers', { request: { set: { 'x-channel': 'pos' } }, response: { remove: ['server'] } }), {
    outcome: 'pass', note: 'never refuses; request set x-channel; response remove server',
  })
})

t.test('ip-restriction depends on the client address, which explain cannot know', async (t) => {
  t.same(explain('ip-restriction', { allow: ['10.0.0.0/8'], deny: ['10.0.0.1'] }), {
    outcome: 'depends', status: 403, code: 'ip_not_allowed', note: 'depends on the client address (allow 10.0.0.0/8; deny 10.0.0.1)',
  })
})

t.test('organization with a query parameter depends on what the request sends', async (t) => {
  t.same(explain('organization', { query: 'organization_id', not_found: false }), {
    outcome: 'depends', status: 403, code: 'forbidden', note: '?organization_id, when sent, must be in org_hq_demo\'s tree',
  })
})

t.test('organization on a path parameter, explained for any of its values, depends with the refusal not_found picks', async (t) => {
  const anyParams = { ...request, anyParams: true }
  t.same([true, false].map((notFound) => explain('organization', { param: 'store_org_id', not_found: notFound }, anyParams)), [
    { outcome: 'depends', status: 404, code: 'store_not_found', note: ':store_org_id must be a store in org_hq_demo\'s tree' },
    { outcome: 'depends', status: 403, code: 'forbidden', note: ':store_org_id must be an organization or store in org_hq_demo\'s tree' },
  ])
})

t.test('a plugin whose explain is not a function is not a policy plugin', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-explain-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  await writeFile(join(dir, 'bad.mjs'), `export default { name: 'bad', description: 'x', schema: { type: 'object' }, explain: 'yes', create: () => () => undefined }\n`)
  // Relative paths follow the config's folder: the content folder is named absolutely.
  const error = await parseGatewayConfig(gatewayFixture().set('plugins', ['./bad.mjs']).text(), join(dir, 'gateway.yaml')).catch((e: unknown) => e)
  t.ok(error instanceof ConfigError)
  t.same((error as ConfigError).problems.map((p) => p.message), ['"./bad.mjs" is not a policy plugin: `explain` must be a function when given'])
})
