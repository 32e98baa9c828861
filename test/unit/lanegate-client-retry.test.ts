import t, { type Test } from 'tap'
import { LanegateClient, LanegateError, LanegateNetworkError, type LanegateClientOptions } from '../../src/client/index.js'
import { fakeClock, startScriptedServer, type FakeClock, type ScriptedServer } from '../helpers/scripted-server.js'

// The spec's client guidance against a scripted server: which answers are retried, how often, and how long the
// client waits between attempts (on a fake clock, so a 60 s Retry-After costs nothing).

async function setup (t: Test, options: Partial<LanegateClientOptions> = {}): Promise<{ server: ScriptedServer, clock: FakeClock, client: LanegateClient }> {
  const server = await startScriptedServer()
  t.teardown(server.close)
  const clock = fakeClock()
  const client = new LanegateClient({ baseUrl: server.url, clientId: 'demo-exchange', clientSecret: 'sekret-value-1', clock, ...options })
  return { server, clock, client }
}

const DISPATCH = { dispatch_id: '01JDISPATCH', operation_type: 'price-change', status: 'previewed', stores: [], created_at: '2026-11-23T12:00:00.000Z' }

t.test('a 429 waits the Retry-After header, then resends', async (t) => {
  const { server, clock, client } = await setup(t)
  server.script.push({ status: 429, headers: { 'retry-after': '7' }, json: { error: 'Too many requests' } })
  t.same(await client.fanout.get('01JDISPATCH'), { ok: true })
  t.same(clock.waits, [7000])
  t.equal(server.calls.length, 2)
})

t.test('a 429 without the header waits the body\'s retry_after', async (t) => {
  const { server, clock, client } = await setup(t)
  server.script.push({ status: 429, json: { error: 'Too many requests', retry_after: 12 } })
  await client.content.list()
  t.same(clock.waits, [12000])
  t.equal(server.calls.length, 2)
})

t.test('a 429 that says nothing waits 60 s', async (t) => {
  const { server, clock, client } = await setup(t)
  server.script.push({ status: 429, json: { error: 'Too many requests' } })
  await client.content.list()
  t.same(clock.waits, [60000])
})

t.test('a Retry-After given as an HTTP date waits until then', async (t) => {
  const { server, clock, client } = await setup(t)
  server.script.push({ status: 429, headers: { 'retry-after': new Date(clock.now() + 30_000).toUTCString() } })
  await client.content.list()
  t.same(clock.waits, [30000])
})

t.test('a 429 asking longer than maxWaitMs is thrown at once with retryAfter', async (t) => {
  const { server, clock, client } = await setup(t, { retry: { maxWaitMs: 60_000 } })
  server.script.push({ status: 429, headers: { 'retry-after': '120' }, json: { error: 'Too many requests', retry_after: 120 } })
  const error = await client.payments.processorConfig().then(() => undefined, (e: unknown) => e)
  t.ok(error instanceof LanegateError)
  const e = error as LanegateError
  t.same({ status: e.status, code: e.code, retryAfter: e.retryAfter, body: e.body }, { status: 429, code: 'too_many_requests', retryAfter: 120, body: { error: 'Too many requests', retry_after: 120 } })
  t.same(clock.waits, [])
  t.equal(server.calls.length, 1)
})

t.test('a POST without an Idempotency-Key is resent after a 429 (it was not processed)', async (t) => {
  const { server, clock, client } = await setup(t)
  server.script.push({ status: 429, headers: { 'retry-after': '1' } }, { status: 200, json: DISPATCH })
  t.same(await client.fanout.preview({ operation_type: 'price-change', payload: {}, store_org_ids: ['org_store_001'] }), DISPATCH)
  t.same(clock.waits, [1000])
  t.equal(server.calls.length, 2)
})

t.test('a GET answered 5xx backs off 1 s, 2 s, 4 s and then succeeds', async (t) => {
  const { server, clock, client } = await setup(t)
  server.script.push({ status: 503, json: { error: 'x' } }, { status: 500, json: {} }, { status: 502, json: { error: 'upstream_error' } })
  t.same(await client.fanout.get('01JDISPATCH'), { ok: true })
  t.same(clock.waits, [1000, 2000, 4000])
  t.equal(server.calls.length, 4)
})

t.test('a GET that keeps failing with 5xx is thrown after maxAttempts (default 4)', async (t) => {
  const { server, clock, client } = await setup(t)
  server.fallback = { status: 500, json: { error: 'Internal server error.' } }
  await t.rejects(client.content.list(), { name: 'LanegateError', status: 500, code: 'internal_error' })
  t.same(clock.waits, [1000, 2000, 4000])
  t.equal(server.calls.length, 4)
})

t.test('maxAttempts bounds the attempts', async (t) => {
  const { server, clock, client } = await setup(t, { retry: { maxAttempts: 2 } })
  server.fallback = { status: 503, json: { error: 'The gateway is shutting down or a dependency is unavailable; retry shortly.' } }
  await t.rejects(client.content.list(), { status: 503, code: 'service_unavailable' })
  t.same(clock.waits, [1000])
  t.equal(server.calls.length, 2)
})

t.test('a POST without an Idempotency-Key is not resent after a 5xx', async (t) => {
  const { server, clock, client } = await setup(t)
  server.script.push({ status: 502, json: { error: 'upstream_error', upstream_status: 0, upstream_body: '', message: 'm' } })
  await t.rejects(client.fanout.preview({ operation_type: 'price-change', payload: {}, store_org_ids: ['org_store_001'] }), { status: 502, code: 'upstream_error' })
  t.same(clock.waits, [])
  t.equal(server.calls.length, 1)
})

t.test('a live POST carrying an Idempotency-Key is resent after a 5xx', async (t) => {
  const { server, clock, client } = await setup(t)
  server.script.push({ status: 503, json: {} })
  const answer = await client.live.post('org_store_001', 'orders', { a: 1 }, { headers: { 'Idempotency-Key': 'k-1' } })
  t.equal(answer.status, 200)
  t.same(clock.waits, [1000])
  t.same(server.calls.map((c) => [c.method, c.url, c.headers['idempotency-key'], c.body]), [
    ['POST', '/v1/stores/org_store_001/live/orders', 'k-1', '{"a":1}'],
    ['POST', '/v1/stores/org_store_001/live/orders', 'k-1', '{"a":1}'],
  ])
})

t.test('createIntent adds an Idempotency-Key and resends with the same key after a 5xx', async (t) => {
  const { server, clock, client } = await setup(t)
  server.script.push({ status: 500, json: { success: false, message: 'Internal server error.' } }, { status: 201, json: { success: true, data: { id: 'pi_1' } } })
  t.same(await client.payments.createIntent({ amount: 100, currency: 'usd', organization_id: 'org_hq_demo' }), { id: 'pi_1' })
  t.same(clock.waits, [1000])
  const keys = server.calls.map((c) => c.headers['idempotency-key'])
  t.equal(keys.length, 2)
  t.match(keys[0], /^[0-9a-f-]{36}$/)
  t.equal(keys[1], keys[0])
})

t.test('cancelIntent uses the caller\'s Idempotency-Key when given', async (t) => {
  const { server, client } = await setup(t)
  server.script.push({ status: 200, json: { success: true, data: { id: 'pi_1', status: 'canceled' } } })
  await client.payments.cancelIntent('pi_1', { cancellationReason: 'duplicate' }, { idempotencyKey: 'cancel-pi_1' })
  t.same(server.calls.map((c) => [c.method, c.url, c.headers['idempotency-key'], c.body]), [['POST', '/api/v1/ecommerce/payment-intents/pi_1/cancel', 'cancel-pi_1', '{"cancellation_reason":"duplicate"}']])
})

t.test('a fan-out commit is resent after a 5xx (idempotent by its dispatch id)', async (t) => {
  const { server, clock, client } = await setup(t)
  server.script.push({ status: 503, json: {} }, { status: 200, json: { ...DISPATCH, status: 'committed' } })
  t.equal((await client.fanout.commit('01JDISPATCH')).status, 'committed')
  t.same(clock.waits, [1000])
  t.equal(server.calls.length, 2)
})

t.test('a resent fan-out commit whose lost first attempt went through resolves with the dispatch', async (t) => {
  const { server, clock, client } = await setup(t)
  const committed = { ...DISPATCH, status: 'committed' }
  server.script.push('reset', { status: 409, json: { error: 'fanout_not_previewed', dispatch_id: '01JDISPATCH', status: 'committed', message: 'm' } }, { status: 200, json: committed })
  t.same(await client.fanout.commit('01JDISPATCH'), committed)
  t.same(server.calls.map((c) => `${c.method} ${c.url}`), ['POST /v1/fanout/dispatches/01JDISPATCH/commit', 'POST /v1/fanout/dispatches/01JDISPATCH/commit', 'GET /v1/fanout/dispatches/01JDISPATCH'])
  t.same(clock.waits, [1000])
})

t.test('a fan-out commit answered 409 on its first attempt is thrown', async (t) => {
  const { server, client } = await setup(t)
  const body = { error: 'fanout_not_previewed', dispatch_id: '01JDISPATCH', status: 'committed', message: 'm' }
  server.script.push({ status: 409, json: body })
  await t.rejects(client.fanout.commit('01JDISPATCH'), { status: 409, code: 'fanout_not_previewed', resent: false, body })
  t.equal(server.calls.length, 1)
})

t.test('a GET whose connection breaks is resent after 1 s, 2 s', async (t) => {
  const { server, clock, client } = await setup(t)
  server.script.push('reset', 'reset')
  t.same(await client.content.circulars(), { ok: true })
  t.same(clock.waits, [1000, 2000])
  t.equal(server.calls.length, 3)
})

t.test('a POST without a key whose connection breaks is thrown as LanegateNetworkError, not resent', async (t) => {
  const { server, clock, client } = await setup(t)
  server.script.push('reset')
  await t.rejects(client.fanout.preview({ operation_type: 'x', payload: {}, store_org_ids: [] }), LanegateNetworkError)
  t.same(clock.waits, [])
  t.equal(server.calls.length, 1)
})

t.test('other error statuses are thrown at once', async (t) => {
  for (const status of [400, 403, 404, 405, 409, 413, 422]) {
    const { server, clock, client } = await setup(t)
    server.script.push({ status, json: { error: 'x' } })
    await t.rejects(client.content.list(), { name: 'LanegateError', status }, `${status}`)
    t.equal(server.calls.length, 1, `${status}: one call`)
    t.same(clock.waits, [], `${status}: no wait`)
  }
})

t.test('a 401 gets a new token and one retry', async (t) => {
  const { server, client } = await setup(t)
  server.script.push({ status: 401, json: { error: 'Unauthenticated.' } })
  t.same(await client.content.list(), { ok: true })
  t.same(server.calls.map((c) => c.headers.authorization), ['Bearer tok-1', 'Bearer tok-2'])
  t.equal(server.tokenCalls.length, 2)
})

t.test('a second 401 is thrown as unauthenticated, after exactly one retry', async (t) => {
  const { server, client } = await setup(t)
  server.fallback = { status: 401, json: { error: 'Unauthenticated.' } }
  await t.rejects(client.content.list(), { status: 401, code: 'unauthenticated' })
  t.equal(server.calls.length, 2)
  t.equal(server.tokenCalls.length, 2)
})

t.test('the token is cached until fewer than refreshBeforeSeconds remain', async (t) => {
  const { server, clock, client } = await setup(t, { refreshBeforeSeconds: 300 })
  await client.content.list()
  clock.advance(3299_000)
  await client.content.list()
  t.equal(server.tokenCalls.length, 1, 'still cached with 301 s left')
  clock.advance(2_000)
  await client.content.list()
  // With 299 s left the call goes on with tok-1 (still valid) and the refresh runs beside it.
  await client.tokens.settled()
  t.equal(server.tokenCalls.length, 2, 'refreshed with 299 s left')
  await client.content.list()
  t.same(server.calls.map((c) => c.headers.authorization), ['Bearer tok-1', 'Bearer tok-1', 'Bearer tok-1', 'Bearer tok-2'])
})

t.test('100 concurrent calls with an expired token cause one token request', async (t) => {
  const { server, clock, client } = await setup(t)
  await client.content.list()
  clock.advance(3600_000)
  await Promise.all(Array.from({ length: 100 }, () => client.content.list()))
  t.equal(server.tokenCalls.length, 2)
  t.equal(server.calls.filter((c) => c.headers.authorization === 'Bearer tok-2').length, 100)
})

t.test('100 concurrent calls answered 401 cause one refresh', async (t) => {
  const { server, client } = await setup(t)
  await client.content.list()
  // The gateway stops accepting tok-1 (a key rotation, say): every call carrying it is answered 401.
  server.fallback = (call) => call.headers.authorization === 'Bearer tok-1' ? { status: 401, json: { error: 'Unauthenticated.' } } : { status: 200, json: { ok: true } }
  await Promise.all(Array.from({ length: 100 }, () => client.content.list()))
  t.equal(server.tokenCalls.length, 2)
  t.equal(server.calls.length, 201)
})

t.test('invalid_client from the token endpoint is thrown, never retried', async (t) => {
  const { server, client } = await setup(t)
  server.tokenScript.push({ status: 401, json: { error: 'invalid_client', error_description: 'Client authentication failed.' } })
  await t.rejects(client.content.list(), { name: 'LanegateError', status: 401, code: 'invalid_client', source: 'token', message: 'the token endpoint answered 401 invalid_client: Client authentication failed.' })
  t.equal(server.tokenCalls.length, 1)
  t.equal(server.calls.length, 0)
})

t.test('invalid_scope from the token endpoint is thrown, never retried', async (t) => {
  const { server, client } = await setup(t, { scope: 'nope:x' })
  server.tokenScript.push({ status: 400, json: { error: 'invalid_scope', error_description: 'The requested scope is invalid or not authorized for this client.' } })
  await t.rejects(client.content.list(), { status: 400, code: 'invalid_scope', source: 'token' })
  t.equal(server.tokenCalls.length, 1)
  t.match(server.tokenCalls[0].body, /(^|&)scope=nope%3Ax(&|$)/)
})

t.test('a 429 from the token endpoint waits its Retry-After like any other', async (t) => {
  const { server, clock, client } = await setup(t)
  server.tokenScript.push({ status: 429, headers: { 'retry-after': '5' }, json: { error: 'rate_limit_exceeded', retry_after: 5 } })
  await client.content.list()
  t.same(clock.waits, [5000])
  t.equal(server.tokenCalls.length, 2)
})

t.test('an abort during a Retry-After wait rejects at once with the signal\'s reason', async (t) => {
  const server = await startScriptedServer()
  t.teardown(server.close)
  const client = new LanegateClient({ baseUrl: server.url, clientId: 'demo-exchange', clientSecret: 'sekret-value-1' }) // the real clock
  server.script.push({ status: 429, headers: { 'retry-after': '30' } })
  const controller = new AbortController()
  const started = Date.now()
  setTimeout(() => controller.abort(new Error('caller gave up')), 100)
  await t.rejects(client.content.list({}, { signal: controller.signal }), { message: 'caller gave up' })
  t.ok(Date.now() - started < 5000, 'did not wait the 30 s')
  t.equal(server.calls.length, 1)
})

t.test('an abort during a request rejects at once and is not retried', async (t) => {
  const { server, clock, client } = await setup(t)
  server.script.push('stall')
  const controller = new AbortController()
  setTimeout(() => controller.abort(new Error('timeout of mine')), 100)
  await t.rejects(client.fanout.get('01JDISPATCH', { signal: controller.signal }), { message: 'timeout of mine' })
  t.same(clock.waits, [])
  t.equal(server.calls.length, 1)
})
