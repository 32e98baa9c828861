import { spawn } from 'node:child_process'
import t from 'tap'
import { repoPath } from '../helpers/paths.js'

const BIN = repoPath('bin/lanegate.js')
const DEMO = repoPath('gateway.yaml')

/** Runs the real CLI (bin/lanegate.js) and collects its output. */
function run (args: string[]): Promise<{ code: number | null, stdout: string, stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => { stdout += d.toString() })
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString() })
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

const paymentsChain = (scope: string) => [
  { policy: 'rate-limit', from: 'service', options: { limit: 'payments-per-ip' }, summary: 'limit payments-per-ip' },
  { policy: 'auth', from: 'service', options: { realm: 'lanegate' }, summary: 'bearer token' },
  { policy: 'token-type', from: 'service', options: { allow: ['service'] }, summary: 'service tokens' },
  { policy: 'scope', from: 'route', options: { all: [scope] }, summary: `all of ${scope}` },
]

t.test('routes --json lists every served route of gateway.yaml with its resolved chain in run order', async (t) => {
  const res = await run(['routes', '--config', DEMO, '--json'])
  t.equal(res.code, 0, res.stderr)
  const { routes } = JSON.parse(res.stdout) as { routes: { methods: string[], path: string, service: string, route: string }[] }
  t.same(routes.map((r) => `${r.methods.join(',')} ${r.path} ${r.service}/${r.route}`), [
    'POST /oauth/token oauth/token',
    'GET /.well-known/oauth-authorization-server oauth/metadata',
    'GET /.well-known/jwks.json oauth/jwks',
    'GET /healthz gateway/healthz',
    'GET /openapi.json gateway/openapi',
    'GET /api/v1/ecommerce/config/processor payments/processor_config',
    'POST /api/v1/ecommerce/payment-intents payments/create_intent',
    'GET /api/v1/ecommerce/payment-intents/:intent payments/get_intent',
    'POST /api/v1/ecommerce/payment-intents/:intent/cancel payments/cancel_intent',
    'GET /api/v1/ecommerce/connected-account payments/connected_account',
    'GET /public/v1/content content/content_list',
    'GET /public/v1/circulars content/circulars_list',
    'GET /v1/stores/:store_org_id/live/* live/read',
    'POST,PUT,PATCH,DELETE /v1/stores/:store_org_id/live/* live/write',
    'GET /v1/hq/timeseries/:metric timeseries/query',
    'GET /v1/reports reports/list',
    'GET /v1/reports/:report_id reports/get',
    'POST /v1/reports/:report_id/run reports/run',
    'POST /v1/fanout/preview fanout/preview',
    'POST /v1/fanout/dispatches/:dispatch_id/commit fanout/commit',
    'GET /v1/fanout/dispatches/:dispatch_id fanout/get',
    'POST /v1/hostfile/files/author hostfile/author',
    'GET,HEAD /legacy/pricing/prices pricing/list_prices',
    'GET,HEAD /legacy/pricing/prices/:sku pricing/read_price',
    'PUT /legacy/pricing/prices/:sku pricing/write_price',
  ])
  t.same(routes.find((r) => r.route === 'create_intent'), {
    methods: ['POST'],
    path: '/api/v1/ecommerce/payment-intents',
    service: 'payments',
    route: 'create_intent',
    envelope: 'payments',
    description: 'Creates a payment intent (Idempotency-Key supported). Scope: commerce:payment-intents.create.',
    chain: paymentsChain('commerce:payment-intents.create'),
  })
})

t.test('routes prints a table, one line per route, with the chain summarised', async (t) => {
  const res = await run(['routes', '--config', DEMO])
  t.equal(res.code, 0, res.stderr)
  const lines = res.stdout.trim().split('\n')
  t.match(lines[0], /^METHOD\s+PATH\s+SERVICE\s+ROUTE\s+ENVELOPE\s+CHAIN$/)
  t.equal(lines.length, 26)
  // The demo's live read route upgrades to WebSockets (services.live.websocket): `+WS` after its methods.
  const read = lines.find((l) => l.startsWith('GET+WS ') && l.includes('live/*'))
  t.match(read, /^GET\+WS\s+\/v1\/stores\/:store_org_id\/live\/\*\s+live\s+read\s+exchange\s+cors\(origins http:\/\/localhost:3000\) → auth\(bearer token\) → token-type\(service or user tokens\) → rate-limit\(limit exchange-per-client\) → scope\(all of exchange:live\.read\) → organization\(path :store_org_id in the caller's tree \(404 otherwise\)\)$/)
  // The demo `pricing` block is a proxy service (`type: proxy`): its routes come from its settings.
  t.same(lines.filter((l) => l.includes(' pricing ')).map((l) => l.split(/\s{2,}/).slice(0, 5)), [
    ['GET,HEAD', '/legacy/pricing/prices', 'pricing', 'list_prices', 'exchange'],
    ['GET,HEAD', '/legacy/pricing/prices/:sku', 'pricing', 'read_price', 'exchange'],
    ['PUT', '/legacy/pricing/prices/:sku', 'pricing', 'write_price', 'exchange'],
  ])
  t.match(lines.find((l) => l.includes(' write_price ')), /auth\(bearer token\) → rate-limit\(limit exchange-per-client\) → scope\(all of pricing:write\)$/)
})

t.test('routes reports an invalid config like validate and exits 1', async (t) => {
  const res = await run(['routes', '--config', repoPath('no-such-gateway.yaml')])
  t.equal(res.code, 1)
  t.equal(res.stdout, '')
  t.match(res.stderr, /no-such-gateway\.yaml: 1 error$/m)
})

async function explain (args: string[]): Promise<Record<string, unknown>> {
  const res = await run(['explain', '--config', DEMO, '--json', ...args])
  if (res.code !== 0) throw new Error(`explain exited ${res.code}: ${res.stderr}`)
  return JSON.parse(res.stdout) as Record<string, unknown>
}

const rateLimitByIp = { policy: 'rate-limit', outcome: 'depends', status: 429, code: 'too_many_requests', note: 'counts against limit payments-per-ip (100 per 60 s, keyed by the client IP)' }

t.test('explain: demo-status creating a payment intent is refused 403 forbidden at scope', async (t) => {
  const result = await explain(['--client', 'demo-status', 'POST', '/api/v1/ecommerce/payment-intents'])
  t.same(result, {
    method: 'POST',
    path: '/api/v1/ecommerce/payment-intents',
    caller: { tokenType: 'service', clientId: 'demo-status', organizationId: 'org_hq_demo', scopes: ['commerce:payment-intents.read'] },
    route: { service: 'payments', route: 'create_intent', envelope: 'payments', params: {} },
    steps: [
      rateLimitByIp,
      { policy: 'auth', outcome: 'pass', note: 'a valid service token of demo-status (organization org_hq_demo)' },
      { policy: 'token-type', outcome: 'pass', note: 'service tokens are accepted' },
      { policy: 'scope', outcome: 'refuse', status: 403, code: 'forbidden', note: 'demo-status lacks commerce:payment-intents.create' },
    ],
    result: { outcome: 'refuse', at: 'scope', status: 403, code: 'forbidden' },
  })
})

t.test('explain: demo-checkout passes every step; only the rate limit depends on traffic', async (t) => {
  const result = await explain(['--client', 'demo-checkout', 'POST', '/api/v1/ecommerce/payment-intents'])
  t.same(result.steps, [
    rateLimitByIp,
    { policy: 'auth', outcome: 'pass', note: 'a valid service token of demo-checkout (organization org_hq_demo)' },
    { policy: 'token-type', outcome: 'pass', note: 'service tokens are accepted' },
    { policy: 'scope', outcome: 'pass', note: 'demo-checkout has commerce:payment-intents.create' },
  ])
  t.same(result.result, { outcome: 'depends' })
})

t.test('explain: demo-other reading another HQ\'s store is refused 404 store_not_found at organization (from the path)', async (t) => {
  const result = await explain(['--client', 'demo-other', 'GET', '/v1/stores/org_store_001/live/x'])
  t.same(result.route, { service: 'live', route: 'read', envelope: 'exchange', params: { store_org_id: 'org_store_001', '*': 'x' } })
  t.same((result.steps as unknown[]).at(-1), { policy: 'organization', outcome: 'refuse', status: 404, code: 'store_not_found', note: 'org_store_001 is not in org_other_hq\'s tree' })
  t.same(result.result, { outcome: 'refuse', at: 'organization', status: 404, code: 'store_not_found' })
  const own = await explain(['--client', 'demo-other', 'GET', '/v1/stores/org_store_900/live/x'])
  t.same((own.steps as unknown[]).at(-1), { policy: 'organization', outcome: 'pass', note: 'store org_store_900 is in org_other_hq\'s tree' })
})

t.test('explain: a revoked account is refused 401 at auth and later steps are not reached', async (t) => {
  const result = await explain(['--client', 'demo-revoked', 'GET', '/api/v1/ecommerce/config/processor'])
  t.same((result.steps as unknown[]).slice(1), [
    { policy: 'auth', outcome: 'refuse', status: 401, code: 'unauthenticated', note: 'service account demo-revoked is not active: its tokens are refused' },
    { policy: 'token-type', outcome: 'not-reached', note: 'not reached (auth refuses)' },
    { policy: 'scope', outcome: 'not-reached', note: 'not reached (auth refuses)' },
  ])
})

t.test('explain: a user token on a service-only route is refused 401 invalid_token_type at token-type', async (t) => {
  const result = await explain(['--user', 'user_1', '--org', 'org_hq_demo', '--scopes', 'exchange:fanout.preview', 'GET', '/v1/fanout/dispatches/01HZ'])
  t.same(result.result, { outcome: 'refuse', at: 'token-type', status: 401, code: 'invalid_token_type' })
})

t.test('explain: the router\'s own answers, 405 for a known path and 404 for an unknown one', async (t) => {
  const notAllowed = await explain(['--client', 'demo-checkout', 'DELETE', '/api/v1/ecommerce/payment-intents'])
  t.same(notAllowed.result, { outcome: 'refuse', at: '(router)', status: 405, code: 'method_not_allowed' })
  const notFound = await explain(['--client', 'demo-checkout', 'GET', '/api/v1/ecommerce/nothing'])
  t.same(notFound.steps, [{ policy: '(router)', outcome: 'refuse', status: 404, code: 'not_found', note: 'no route serves this path' }])
})

t.test('explain: a proxy service\'s route (from its settings) and the reports list at its prefix are matched like fastify does', async (t) => {
  const read = await explain(['--client', 'demo-status', 'GET', '/legacy/pricing/prices/sku_1'])
  t.same([read.route, read.result], [
    { service: 'pricing', route: 'read_price', envelope: 'exchange', params: { sku: 'sku_1' } },
    { outcome: 'refuse', at: 'scope', status: 403, code: 'forbidden' },
  ])
  const wrongMethod = await explain(['--client', 'demo-pricing', 'DELETE', '/legacy/pricing/prices/sku_1'])
  t.same(wrongMethod.result, { outcome: 'refuse', at: '(router)', status: 405, code: 'method_not_allowed' })
  for (const path of ['/v1/reports', '/v1/reports/']) {
    t.same((await explain(['--client', 'demo-status', 'GET', path])).route, { service: 'reports', route: 'list', envelope: 'exchange', params: {} }, path)
  }
})

t.test('explain prints a readable verdict by default', async (t) => {
  const res = await run(['explain', '--config', DEMO, '--client', 'demo-status', 'POST', '/api/v1/ecommerce/payment-intents'])
  t.equal(res.code, 0, res.stderr)
  t.same(res.stdout.trim().split('\n'), [
    'POST /api/v1/ecommerce/payment-intents → payments/create_intent (envelope payments)',
    'caller: demo-status (service token, organization org_hq_demo, scopes commerce:payment-intents.read)',
    '  1. rate-limit  depends 429 too_many_requests — counts against limit payments-per-ip (100 per 60 s, keyed by the client IP)',
    '  2. auth        pass — a valid service token of demo-status (organization org_hq_demo)',
    '  3. token-type  pass — service tokens are accepted',
    '  4. scope       refuse 403 forbidden — demo-status lacks commerce:payment-intents.create',
    'result: refused at scope with 403 forbidden',
  ])
})

t.test('explain: an outside plugin without explain is shown as not explained (config with plugins:)', async (t) => {
  const res = await run(['explain', '--config', repoPath('examples/gateway.plugins.yaml'), '--json', '--client', 'demo-content', 'GET', '/public/v1/content'])
  t.equal(res.code, 0, res.stderr)
  const result = JSON.parse(res.stdout) as { steps: unknown[], result: unknown }
  t.same(result.steps.at(-1), { policy: 'require-header', outcome: 'not-explained', note: 'policy require-header has no explain: what it does is unknown here' })
  t.same(result.result, { outcome: 'depends' })
})

t.test('explain: an unknown client is an error naming the accounts; exit 1', async (t) => {
  const res = await run(['explain', '--config', DEMO, '--client', 'nobody', 'GET', '/healthz'])
  t.equal(res.code, 1)
  t.equal(res.stderr.trim(), 'explain: unknown client "nobody" (service accounts: demo-checkout, demo-status, demo-content, demo-exchange, demo-other, demo-pricing, demo-revoked)')
})

t.test('a real `lanegate start` serves /openapi.json on its public port without a token', async (t) => {
  const { mkdtemp, rm } = await import('node:fs/promises')
  const { tmpdir } = await import('node:os')
  const { join } = await import('node:path')
  const { spawnGateway } = await import('../helpers/spawn-gateway.js')
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-openapi-e2e-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const { child, port, exited } = await spawnGateway({ env: { LANEGATE_DATA_DIR: dir } })
  t.teardown(async () => { if (child.exitCode === null) { child.kill('SIGTERM'); await exited } })
  const res = await fetch(`http://127.0.0.1:${port}/openapi.json`)
  t.equal(res.status, 200)
  const document = await res.json() as { openapi: string, paths: Record<string, Record<string, { security: unknown }>> }
  t.equal(document.openapi, '3.1.0')
  t.same(document.paths['/api/v1/ecommerce/payment-intents']?.post?.security, [{ oauth2: ['commerce:payment-intents.create'] }])
})
