import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { spawnGateway, type SpawnedGateway } from '../helpers/spawn-gateway.js'
import { gatewayFixture, type GatewayFixture } from '../helpers/gateway-fixture.js'
import { histogramCount, sample, scrape, scrapeText, type ParsedFamily } from '../helpers/prometheus.js'
import { waitFor } from '../helpers/wait-for.js'

/** A lane that records what it received and answers 502 under /fail, 200 elsewhere. */
async function startLane (): Promise<{ url: string, seen: IncomingHttpHeaders[], close: () => Promise<void> }> {
  const seen: IncomingHttpHeaders[] = []
  const server = createServer((req, res) => {
    seen.push(req.headers)
    const status = req.url?.startsWith('/fail') === true ? 502 : 200
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: status === 200 }))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }),
  }
}

async function token (base: string, client: string): Promise<string> {
  const res = await fetch(`${base}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `grant_type=client_credentials&client_id=${client}&client_secret=${client}-secret`,
  })
  if (res.status !== 200) throw new Error(`token for ${client}: ${res.status}`)
  return (await res.json() as { access_token: string }).access_token
}

let gw: SpawnedGateway
let lane: Awaited<ReturnType<typeof startLane>>
let admin: string
let configFile: string
let demo: GatewayFixture

t.before(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-metrics-'))
  lane = await startLane()
  // The demo config with a payments limit small enough to reach in a test.
  demo = gatewayFixture().set('rate_limits.payments-per-ip.points', 4)
  const yaml = demo.text()
  const config = join(dir, 'gateway.yaml')
  configFile = config
  await writeFile(config, yaml)
  gw = await spawnGateway({ config, env: { LANEGATE_DATA_DIR: dir, LANE_001_URL: lane.url, LANE_002_URL: 'http://127.0.0.1:9' } })
  admin = gw.admin as string
  t.teardown(async () => {
    gw.child.kill('SIGTERM')
    await gw.exited
    await lane.close()
    await rm(dir, { recursive: true, force: true })
  })
})

/** The change of one series across `act`. */
async function delta (name: string, labels: Record<string, string>, act: () => Promise<void>): Promise<number> {
  const before: ParsedFamily[] = await scrape(admin)
  await act()
  return sample(await scrape(admin), name, labels) - sample(before, name, labels)
}

t.test('the admin listener serves /metrics in Prometheus text format with the process defaults', async (t) => {
  const res = await fetch(`${admin}/metrics`)
  t.equal(res.status, 200)
  t.match(res.headers.get('content-type'), /^text\/plain; version=0\.0\.4/)
  const families = await scrape(admin)
  t.ok(families.some((f) => f.name === 'process_cpu_user_seconds_total'), 'prom-client process defaults')
  t.ok(families.some((f) => f.name === 'nodejs_eventloop_lag_seconds'), 'prom-client Node.js defaults')
  t.equal(sample(families, 'lanegate_config_version'), 1)
  t.equal(sample(families, 'lanegate_dependency_up', { dependency: 'database' }), 1)
  const publicPort = await fetch(`${gw.base}/metrics`)
  t.equal(publicPort.status, 404, 'metrics are not on the public port')
})

t.test('a token counts in lanegate_tokens_issued_total by client id, a refused one by its OAuth error', async (t) => {
  t.equal(await delta('lanegate_tokens_issued_total', { client_id: 'demo-checkout' }, async () => { await token(gw.base, 'demo-checkout') }), 1)
  t.equal(await delta('lanegate_token_errors_total', { error: 'invalid_client' }, async () => {
    const res = await fetch(`${gw.base}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials&client_id=demo-checkout&client_secret=wrong' })
    t.equal(res.status, 401)
  }), 1)
})

t.test('a 201 and a 403 count by service, route id, method and status; the 403 as an auth refusal', async (t) => {
  const checkout = await token(gw.base, 'demo-checkout')
  const status = await token(gw.base, 'demo-status')
  const create = (bearer: string): Promise<Response> => fetch(`${gw.base}/api/v1/ecommerce/payment-intents`, {
    method: 'POST',
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
    body: JSON.stringify({ organization_id: 'org_hq_demo', amount: 100, currency: 'usd' }),
  })
  const labels = { service: 'payments', route: 'create_intent', method: 'POST' }
  t.equal(await delta('lanegate_http_requests_total', { ...labels, status: '201' }, async () => { t.equal((await create(checkout)).status, 201) }), 1)
  const before = await scrape(admin)
  t.equal((await create(status)).status, 403)
  const after = await scrape(admin)
  t.equal(sample(after, 'lanegate_http_requests_total', { ...labels, status: '403' }) - sample(before, 'lanegate_http_requests_total', { ...labels, status: '403' }), 1)
  t.equal(sample(after, 'lanegate_auth_refusals_total', { service: 'payments', code: 'forbidden' }) - sample(before, 'lanegate_auth_refusals_total', { service: 'payments', code: 'forbidden' }), 1)
  const text = await scrapeText(admin)
  t.equal(histogramCount(text, 'lanegate_http_request_duration_seconds', { service: 'payments', route: 'create_intent' }), sample(after, 'lanegate_http_requests_total', { ...labels, status: '201' }) + sample(after, 'lanegate_http_requests_total', { ...labels, status: '403' }), 'one latency observation per answer')
})

t.test('a 429 counts in lanegate_rate_limited_total by the limit that refused it', async (t) => {
  const before = await scrape(admin)
  let refused = 0
  for (let i = 0; i < 8; i++) {
    const res = await fetch(`${gw.base}/api/v1/ecommerce/config/processor`)
    if (res.status === 429) refused++
  }
  t.ok(refused > 0, `${refused} requests were refused`)
  const after = await scrape(admin)
  t.equal(sample(after, 'lanegate_rate_limited_total', { limit: 'payments-per-ip' }) - sample(before, 'lanegate_rate_limited_total', { limit: 'payments-per-ip' }), refused)
})

t.test('a lane 502 and an unreachable lane count by store id and outcome', async (t) => {
  const exchange = await token(gw.base, 'demo-exchange')
  const auth = { authorization: `Bearer ${exchange}` }
  t.equal(await delta('lanegate_upstream_requests_total', { upstream: 'org_store_001', outcome: 'http_5xx' }, async () => {
    const res = await fetch(`${gw.base}/v1/stores/org_store_001/live/fail`, { headers: auth })
    t.equal(res.status, 502)
  }), 1)
  t.equal(await delta('lanegate_upstream_requests_total', { upstream: 'org_store_001', outcome: 'ok' }, async () => {
    t.equal((await fetch(`${gw.base}/v1/stores/org_store_001/live/items`, { headers: auth })).status, 200)
  }), 1)
  const before = await scrape(admin)
  const res = await fetch(`${gw.base}/v1/stores/org_store_002/live/items`, { headers: auth })
  t.equal(res.status, 502)
  const after = await scrape(admin)
  t.equal(sample(after, 'lanegate_upstream_requests_total', { upstream: 'org_store_002', outcome: 'unreachable' }) - sample(before, 'lanegate_upstream_requests_total', { upstream: 'org_store_002', outcome: 'unreachable' }), 1)
  t.equal(sample(after, 'lanegate_http_requests_total', { service: 'live', route: 'read', method: 'GET', status: '502' }) - sample(before, 'lanegate_http_requests_total', { service: 'live', route: 'read', method: 'GET', status: '502' }), 1)
})

t.test('/healthz on the admin listener is the liveness answer', async (t) => {
  const res = await fetch(`${admin}/healthz`)
  t.same([res.status, await res.json()], [200, { status: 'ok', config_version: 1 }])
})

t.test('a config reload counts in lanegate_config_reloads_total and moves lanegate_config_version', async (t) => {
  const before = await scrape(admin)
  await writeFile(configFile, demo.set('organizations.0.stores.1.name', 'Demo store 002 (renamed)').text())
  const applied = (families: typeof before): number => sample(families, 'lanegate_config_reloads_total', { result: 'applied' })
  const after = await waitFor(async () => {
    const now = await scrape(admin)
    return applied(now) === applied(before) ? undefined : now
  }, { what: 'lanegate_config_reloads_total{result="applied"} to move', intervalMs: 100 })
  t.equal(sample(after, 'lanegate_config_reloads_total', { result: 'applied' }) - sample(before, 'lanegate_config_reloads_total', { result: 'applied' }), 1)
  t.equal(sample(after, 'lanegate_config_version'), sample(before, 'lanegate_config_version') + 1)
})

// Last: it locks 127.0.0.1 out of the token endpoint for the rest of the window.
t.test('the token endpoint\'s own 429 counts under its limit\'s name', async (t) => {
  const labels = { limit: 'issuer.failed_auth_limit' }
  const before = sample(await scrape(admin), 'lanegate_rate_limited_total', labels)
  let refused = 0
  for (let i = 0; i < 22; i++) {
    const res = await fetch(`${gw.base}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials&client_id=demo-checkout&client_secret=wrong' })
    if (res.status === 429) refused++
  }
  t.ok(refused > 0, `${refused} token requests were refused with 429`)
  t.equal(sample(await scrape(admin), 'lanegate_rate_limited_total', labels) - before, refused)
})
