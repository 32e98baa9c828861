import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { clusterEnv, dropSchema, runName, servicesUnavailable, writeClusterConfig } from '../helpers/cluster-config.js'
import { validPayload } from '../helpers/fanout-fixture.js'
import { startStubLane, type StubLane } from '../helpers/fanout-lane.js'
import { ownRedis } from '../helpers/own-redis.js'
import { spawnGateway, type SpawnedGateway } from '../helpers/spawn-gateway.js'
import { waitFor } from '../helpers/wait-for.js'
import { fetchGatewayToken } from '../helpers/fetch-token.js'

/**
 * Issue 16 item 3: two real `lanegate start` processes serving docker/gateway.cluster.yaml against the shared
 * PostgreSQL (a schema of this run's own) and Redis (a key prefix of this run's own), with the loopback as their
 * trusted proxy so each test picks its own client IP with X-Forwarded-For.
 */
const skip = await servicesUnavailable()
if (skip !== undefined) {
  t.plan(0, `cluster e2e skipped: ${skip}`)
} else {
  await clusterTests()
}

interface Answer { status: number, headers: Headers, body: Record<string, unknown> }

async function call (gateway: SpawnedGateway, path: string, init: { method?: string, ip: string, token?: string, body?: unknown, headers?: Record<string, string> }): Promise<Answer> {
  const res = await fetch(`${gateway.base}${path}`, {
    method: init.method ?? 'GET',
    headers: {
      'x-forwarded-for': init.ip,
      ...(init.token === undefined ? {} : { authorization: `Bearer ${init.token}` }),
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...init.headers,
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  })
  return { status: res.status, headers: res.headers, body: await res.json() as Record<string, unknown> }
}

async function token (gateway: SpawnedGateway, client: string): Promise<string> {
  return fetchGatewayToken(gateway.base, client, { 'x-forwarded-for': '198.51.100.1' })
}

async function stopGateway (gateway: SpawnedGateway, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (gateway.child.exitCode !== null || gateway.child.signalCode !== null) return
  gateway.child.kill(signal)
  await gateway.exited
}

async function clusterTests (): Promise<void> {
  const schema = runName('cluster')
  const prefix = runName('cluster')
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-cluster-'))
  const lanes = new Map<string, StubLane>()
  for (const store of ['org_store_001', 'org_store_002']) lanes.set(store, await startStubLane())
  t.teardown(async () => {
    for (const lane of lanes.values()) await lane.close()
    await dropSchema(schema)
    await rm(dir, { recursive: true, force: true })
  })
  const laneEnv = { LANE_001_URL: lanes.get('org_store_001')?.url ?? '', LANE_002_URL: lanes.get('org_store_002')?.url ?? '' }
  const config = await writeClusterConfig(dir)
  const env = clusterEnv({ schema, prefix, dataDir: join(dir, 'data'), lanes: laneEnv })
  // Both start at once on an empty key directory and a schema that does not exist yet.
  const [a, b] = await Promise.all([spawnGateway({ config, env }), spawnGateway({ config, env })]) as [SpawnedGateway, SpawnedGateway]
  t.teardown(() => Promise.all([stopGateway(a), stopGateway(b)]))

  t.test('the shipped cluster config does not warn about itself: its issuer is the front address (issuer.behind_proxy)', async (t) => {
    for (const gateway of [a, b]) {
      t.match(gateway.output(), /Admin listening on/)
      t.notMatch(gateway.output(), /names port/)
    }
  })

  t.test('a token issued by one instance is accepted by the other (one shared signing key)', async (t) => {
    const fromA = await token(a, 'demo-status')
    const fromB = await token(b, 'demo-status')
    const processor = { success: true, data: { processor: 'stripe', publishable_key: 'pk_test_demo_lanegate', mode: 'test' } }
    for (const [issuer, verifier, jwt] of [[a, b, fromA], [b, a, fromB]] as const) {
      const res = await call(verifier, '/api/v1/ecommerce/config/processor', { ip: '203.0.113.1', token: jwt })
      t.same([res.status, res.body], [200, processor], `issued on :${issuer.port}, verified on :${verifier.port}`)
    }
    const jwks = await Promise.all([a, b].map(async (g) => (await fetch(`${g.base}/.well-known/jwks.json`)).json()))
    t.same(jwks[0], jwks[1], 'both publish the same JWKS')
    t.equal((jwks[0] as { keys: unknown[] }).keys.length, 1, 'starting together generated one key, not two')
  })

  t.test('the payments limit counts once across both: 100 from one IP pass, the 101st is 429 on either', async (t) => {
    const jwt = await token(a, 'demo-status')
    const ip = '203.0.113.2'
    const statuses: number[] = []
    let lastRemaining: string | null = null
    for (let i = 0; i < 100; i++) {
      const res = await call(i % 2 === 0 ? a : b, '/api/v1/ecommerce/config/processor', { ip, token: jwt })
      statuses.push(res.status)
      lastRemaining = res.headers.get('x-ratelimit-remaining')
    }
    t.same(statuses, Array.from({ length: 100 }, () => 200), '100 answered, alternating instances')
    t.equal(lastRemaining, '0', 'the 100th saw the shared count at the limit')
    for (const gateway of [a, b]) {
      const res = await call(gateway, '/api/v1/ecommerce/config/processor', { ip, token: jwt })
      const retryAfter = res.body.retry_after as number
      t.same([res.status, res.body], [429, { error: 'Too many requests', retry_after: retryAfter }], `over the limit on :${gateway.port}`)
      t.ok(retryAfter >= 1 && retryAfter <= 60, `retry_after within the window (${retryAfter})`)
    }
    const other = await call(b, '/api/v1/ecommerce/config/processor', { ip: '203.0.113.3', token: jwt })
    t.equal(other.status, 200, 'another IP has its own count')
  })

  t.test('an idempotent create replayed on the other instance returns the same intent', async (t) => {
    const jwt = await token(a, 'demo-checkout')
    const body = { organization_id: 'org_hq_demo', amount: 4200, currency: 'usd', metadata: { cart: 'cluster-1' } }
    const headers = { 'idempotency-key': `${prefix}-order-1` }
    const first = await call(a, '/api/v1/ecommerce/payment-intents', { method: 'POST', ip: '203.0.113.4', token: jwt, body, headers })
    const again = await call(b, '/api/v1/ecommerce/payment-intents', { method: 'POST', ip: '203.0.113.4', token: jwt, body, headers })
    t.equal(first.status, 201, JSON.stringify(first.body))
    t.same([again.status, again.body], [first.status, first.body], 'the replay is the first answer')
    const id = (first.body.data as { id: string }).id
    const read = await call(b, `/api/v1/ecommerce/payment-intents/${id}`, { ip: '203.0.113.4', token: await token(b, 'demo-status') })
    t.equal((read.body.data as { id?: string }).id, id, 'the other instance reads the intent')
  })

  const exchange = { a: '', b: '' }
  async function preview (on: SpawnedGateway): Promise<string> {
    const res = await call(on, '/v1/fanout/preview', {
      method: 'POST',
      ip: '203.0.113.5',
      token: on === a ? exchange.a : exchange.b,
      body: { operation_type: 'price-change', payload: validPayload, store_org_ids: ['org_store_001', 'org_store_002'] },
    })
    if (res.status !== 200) throw new Error(`preview: ${res.status} ${JSON.stringify(res.body)}`)
    return res.body.dispatch_id as string
  }

  t.test('100 concurrent commits of one dispatch, split across both: one 200, 99 × 409, each lane applied once', async (t) => {
    exchange.a = await token(a, 'demo-exchange')
    exchange.b = await token(b, 'demo-exchange')
    const id = await preview(a)
    const answers = await Promise.all(Array.from({ length: 100 }, (_, i) => {
      const on = i % 2 === 0 ? a : b
      return call(on, `/v1/fanout/dispatches/${id}/commit`, { method: 'POST', ip: '203.0.113.5', token: on === a ? exchange.a : exchange.b })
    }))
    const winners = answers.filter((r) => r.status === 200)
    const losers = answers.filter((r) => r.status === 409)
    t.same([winners.length, losers.length], [1, 99])
    t.equal(winners[0]?.body.status, 'committed')
    for (const loser of losers) {
      const seen = loser.body.status as string
      t.same(loser.body, {
        error: 'fanout_not_previewed',
        dispatch_id: id,
        status: seen,
        message: `Dispatch ${id} is ${seen}; only a previewed dispatch can be committed, once.`,
      })
    }
    for (const [store, lane] of lanes) t.equal(lane.applied.get(`${id}:${store}`), 1, `${store} applied once`)
  })

  t.test('kill -9 of the instance in the middle of a fan-out: the other one\'s recovery sweep completes it', async (t) => {
    const id = await preview(a)
    const s1 = lanes.get('org_store_001') as StubLane
    const s2 = lanes.get('org_store_002') as StubLane
    const callsBefore = [s1.applyCalls(), s2.applyCalls()]
    s1.setMode({ apply: 'apply-then-stall' })
    s2.setMode({ apply: 'stall' })
    const commit = await call(a, `/v1/fanout/dispatches/${id}/commit`, { method: 'POST', ip: '203.0.113.5', token: exchange.a })
    t.same([commit.status, commit.body.status], [202, 'committing'], 'still committing when the commit answers')
    await waitFor(() => s2.applyCalls() !== callsBefore[1], { what: 'org_store_002\'s apply' })
    t.equal(s2.applyCalls(), (callsBefore[1] ?? 0) + 1, 'org_store_002 got its apply before the kill')
    await stopGateway(a, 'SIGKILL')
    s1.setMode({ apply: 'ok' })
    s2.setMode({ apply: 'ok' })
    const final = await waitFor(async () => {
      const body = (await call(b, `/v1/fanout/dispatches/${id}`, { ip: '203.0.113.5', token: exchange.b })).body
      return body.status === 'committing' ? undefined : body
    }, { what: 'instance B\'s recovery sweep to finish the dispatch', intervalMs: 100 })
    t.equal(final.status, 'committed', 'instance B finished the dispatch A started')
    const stores = final.stores as Array<{ store_org_id: string, delivery: { status: string } }>
    t.same(stores.map((s) => [s.store_org_id, s.delivery.status]), [['org_store_001', 'applied'], ['org_store_002', 'applied']])
    t.equal(s1.applied.get(`${id}:org_store_001`), 1, 'org_store_001 applied exactly once (its resend was deduped)')
    t.equal(s2.applied.get(`${id}:org_store_002`), 1, 'org_store_002 applied exactly once')
  })

  t.test('Redis stopped mid-run: requests pass without limit headers (on_store_error: open, never 429); counting resumes when it returns', async (t) => {
    const redis = await ownRedis()
    t.teardown(() => redis.stop())
    const gateway = await spawnGateway({ config, env: { ...env, REDIS_URL: redis.url } })
    t.teardown(() => stopGateway(gateway))
    const jwt = await token(gateway, 'demo-status')
    const read = (): Promise<Answer> => call(gateway, '/api/v1/ecommerce/config/processor', { ip: '203.0.113.6', token: jwt })
    const before = await read()
    t.same([before.status, before.headers.get('x-ratelimit-limit')], [200, '100'], 'counted while Redis runs')
    await redis.stop()
    const during: Array<[number, string | null]> = []
    for (let i = 0; i < 120; i++) {
      const res = await read()
      during.push([res.status, res.headers.get('x-ratelimit-limit')])
    }
    t.same(during, Array.from({ length: 120 }, () => [200, null]), '120 requests (over the limit of 100) all served, without headers')
    t.match(gateway.output(), /rate-limit store/i, 'the store failure is logged')
    await redis.start()
    const after = await waitFor(async () => {
      const res = await read()
      return res.headers.get('x-ratelimit-limit') === null ? undefined : res
    }, { what: 'a request counted again on the restarted Redis', intervalMs: 100 })
    t.same([after.status, after.headers.get('x-ratelimit-limit'), after.headers.get('x-ratelimit-remaining')], [200, '100', '99'],
      'counting resumes on the restarted (empty) Redis')
  })
}
