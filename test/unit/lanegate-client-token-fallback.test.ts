import t, { type Test } from 'tap'
import { LanegateClient, LanegateError, LanegateNetworkError, type LanegateClientOptions, type TokenRefreshFailure } from '../../src/client/index.js'
import { fakeClock, startScriptedServer, type FakeClock, type ScriptedServer } from '../helpers/scripted-server.js'

// A token refresh that fails while the cached token is still valid: the call goes on with that token, the
// failure goes to onTokenRefreshError, the next attempt backs off. Real HTTP token endpoint on port 0, fake clock.

interface Reported { error: unknown, detail: TokenRefreshFailure }

async function setup (t: Test, options: Partial<LanegateClientOptions> = {}): Promise<{ server: ScriptedServer, clock: FakeClock, client: LanegateClient, reported: Reported[], start: number }> {
  const server = await startScriptedServer()
  t.teardown(server.close)
  const clock = fakeClock()
  const start = clock.now()
  const reported: Reported[] = []
  const client = new LanegateClient({
    baseUrl: server.url,
    clientId: 'demo-exchange',
    clientSecret: 'sekret-value-1',
    clock,
    onTokenRefreshError: (error, detail) => { reported.push({ error, detail }) },
    ...options,
  })
  await client.content.list() // tok-1, living 3600 s, due for refresh 300 s before expiry
  return { server, clock, client, reported, start }
}

/** The fields of a LanegateError a test compares, as a whole. */
function summary (error: unknown): unknown {
  if (!(error instanceof LanegateError)) return error
  return { name: error.name, status: error.status, code: error.code, body: error.body, source: error.source, method: error.method, path: error.path, retryAfter: error.retryAfter }
}

const UNAVAILABLE = { status: 503, json: { error: 'temporarily_unavailable', error_description: 'Try again later.' } }
const UNAVAILABLE_ERROR = { name: 'LanegateError', status: 503, code: 'service_unavailable', body: UNAVAILABLE.json, source: 'token', method: 'POST', path: '/oauth/token', retryAfter: undefined }
const INVALID_CLIENT = { status: 401, json: { error: 'invalid_client', error_description: 'Client authentication failed.' } }
const INVALID_CLIENT_ERROR = { name: 'LanegateError', status: 401, code: 'invalid_client', body: INVALID_CLIENT.json, source: 'token', method: 'POST', path: '/oauth/token', retryAfter: undefined }

function authorizations (server: ScriptedServer): unknown[] {
  return server.calls.map((c) => c.headers.authorization)
}

t.test('an early refresh answered 503 leaves the call on the still-valid token, with one token request', async (t) => {
  const { server, clock, client, reported, start } = await setup(t)
  clock.advance(3301_000) // 299 s left
  server.tokenScript.push(UNAVAILABLE)
  t.same(await client.content.list(), { ok: true })
  await client.tokens.settled()
  t.equal(server.tokenCalls.length, 2, 'the first token, then exactly one refresh attempt')
  t.same(clock.waits, [], 'no retry waits inside the refresh')
  t.same(authorizations(server), ['Bearer tok-1', 'Bearer tok-1'])
  t.same(reported.map((r) => [summary(r.error), r.detail]), [[UNAVAILABLE_ERROR, { expiresAt: start + 3600_000, nextAttemptAt: clock.now() + 1000, failures: 1 }]])
})

t.test('within the back-off no token request is made; after it one more attempt; then the new token is used', async (t) => {
  const { server, clock, client, reported } = await setup(t)
  clock.advance(3301_000)
  server.tokenScript.push(UNAVAILABLE, UNAVAILABLE)
  await client.content.list()
  await client.tokens.settled()
  const firstFailure = clock.now()
  clock.advance(999)
  await client.content.list()
  await client.tokens.settled()
  t.equal(server.tokenCalls.length, 2, 'none within the 1 s back-off')
  clock.advance(1)
  await client.content.list()
  await client.tokens.settled()
  t.equal(server.tokenCalls.length, 3, 'one attempt after it')
  t.same(reported.map((r) => r.detail.nextAttemptAt), [firstFailure + 1000, firstFailure + 1000 + 2000])
  clock.advance(1999)
  await client.content.list()
  await client.tokens.settled()
  t.equal(server.tokenCalls.length, 3, 'none within the 2 s back-off')
  clock.advance(1)
  await client.content.list() // still tok-1: the attempt that succeeds runs beside this call
  await client.tokens.settled()
  t.equal(server.tokenCalls.length, 4)
  await client.content.list()
  t.same(authorizations(server), ['Bearer tok-1', 'Bearer tok-1', 'Bearer tok-1', 'Bearer tok-1', 'Bearer tok-1', 'Bearer tok-1', 'Bearer tok-2'])
  t.equal(reported.length, 2)
})

t.test('the back-off doubles up to 30 s', async (t) => {
  const { server, clock, client, reported } = await setup(t)
  clock.advance(3301_000)
  const delays: number[] = []
  for (let i = 0; i < 8; i++) {
    server.tokenScript.push(UNAVAILABLE)
    await client.content.list()
    await client.tokens.settled()
    const next = reported.at(-1)?.detail.nextAttemptAt ?? Number.NaN
    delays.push(next - clock.now())
    clock.advance(next - clock.now())
  }
  t.equal(server.tokenCalls.length, 9)
  t.same(delays, [1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000])
  t.same(reported.map((r) => r.detail.failures), [1, 2, 3, 4, 5, 6, 7, 8])
})

t.test('within 10 s of expiry a failed refresh fails the call as before, after the usual retries', async (t) => {
  const { server, clock, client, reported } = await setup(t)
  clock.advance(3301_000)
  server.tokenScript.push(UNAVAILABLE)
  await client.content.list()
  await client.tokens.settled()
  clock.advance(290_000) // 9 s left
  server.tokenScript.push(UNAVAILABLE, UNAVAILABLE, UNAVAILABLE, UNAVAILABLE)
  const error = await client.content.list().then(() => undefined, (e: unknown) => e)
  t.same(summary(error), UNAVAILABLE_ERROR)
  t.same(clock.waits, [1000, 2000, 4000], 'the token request\'s own retries, as for any 5xx')
  t.equal(server.tokenCalls.length, 6)
  t.equal(server.calls.length, 2, 'no API call without a token')
  t.equal(reported.length, 1, 'a failure thrown is not reported again')
})

t.test('after expiry a failed refresh fails the call', async (t) => {
  const { server, clock, client } = await setup(t, { retry: { maxAttempts: 1 } })
  clock.advance(3600_000)
  server.tokenScript.push(UNAVAILABLE)
  const error = await client.content.list().then(() => undefined, (e: unknown) => e)
  t.same(summary(error), UNAVAILABLE_ERROR)
  t.equal(server.tokenCalls.length, 2)
  t.equal(server.calls.length, 1)
})

t.test('a 429 from the token endpoint: the next early attempt waits its Retry-After', async (t) => {
  const { server, clock, client, reported } = await setup(t)
  clock.advance(3301_000)
  server.tokenScript.push({ status: 429, headers: { 'retry-after': '20' }, json: { error: 'rate_limit_exceeded', retry_after: 20 } })
  t.same(await client.content.list(), { ok: true })
  await client.tokens.settled()
  const failedAt = clock.now()
  t.same(reported.map((r) => [summary(r.error), r.detail.nextAttemptAt]), [[
    { name: 'LanegateError', status: 429, code: 'rate_limit_exceeded', body: { error: 'rate_limit_exceeded', retry_after: 20 }, source: 'token', method: 'POST', path: '/oauth/token', retryAfter: 20 },
    failedAt + 20_000,
  ]])
  t.same(clock.waits, [], 'the call did not wait the 20 s')
  clock.advance(19_999)
  await client.content.list()
  await client.tokens.settled()
  t.equal(server.tokenCalls.length, 2)
  clock.advance(1)
  await client.content.list()
  await client.tokens.settled()
  t.equal(server.tokenCalls.length, 3)
  t.same(authorizations(server).at(-1), 'Bearer tok-1')
  await client.content.list()
  t.same(authorizations(server).at(-1), 'Bearer tok-2')
})

t.test('a 503 with Retry-After: the next early attempt waits it', async (t) => {
  const { server, clock, client, reported } = await setup(t)
  clock.advance(3301_000)
  server.tokenScript.push({ ...UNAVAILABLE, headers: { 'retry-after': '12' } })
  await client.content.list()
  await client.tokens.settled()
  t.same(reported.map((r) => r.detail.nextAttemptAt), [clock.now() + 12_000])
  t.equal(server.tokenCalls.length, 2)
})

t.test('an unreachable token endpoint: the call goes on, a LanegateNetworkError is reported', async (t) => {
  const { server, clock, client, reported } = await setup(t)
  clock.advance(3301_000)
  server.tokenScript.push('reset')
  t.same(await client.content.list(), { ok: true })
  await client.tokens.settled()
  t.equal(reported.length, 1)
  t.ok(reported[0].error instanceof LanegateNetworkError)
  t.same(reported[0].detail, { expiresAt: reported[0].detail.expiresAt, nextAttemptAt: clock.now() + 1000, failures: 1 })
  t.equal(server.tokenCalls.length, 2)
})

t.test('a token endpoint that never answers does not hold the call up', async (t) => {
  const { server, clock, client } = await setup(t)
  clock.advance(3301_000)
  server.tokenScript.push('stall')
  t.same(await client.content.list(), { ok: true })
  t.same(await client.content.list(), { ok: true })
  t.equal(server.tokenCalls.length, 2, 'one refresh under way, not one per call')
  t.same(authorizations(server), ['Bearer tok-1', 'Bearer tok-1', 'Bearer tok-1'])
})

t.test('50 concurrent calls past the refresh point make one token request', async (t) => {
  const { server, clock, client } = await setup(t)
  clock.advance(3301_000)
  await Promise.all(Array.from({ length: 50 }, () => client.content.list()))
  await client.tokens.settled()
  t.equal(server.tokenCalls.length, 2)
  t.equal(server.calls.filter((c) => c.headers.authorization === 'Bearer tok-1').length, 51)
})

t.test('invalid_client on an early refresh: reported once, no more early attempts, thrown when the token is due', async (t) => {
  const { server, clock, client, reported } = await setup(t)
  clock.advance(3301_000)
  server.tokenScript.push(INVALID_CLIENT)
  t.same(await client.content.list(), { ok: true })
  await client.tokens.settled()
  t.same(reported.map((r) => [summary(r.error), r.detail.nextAttemptAt, r.detail.failures]), [[INVALID_CLIENT_ERROR, undefined, 1]])
  for (let i = 0; i < 5; i++) {
    clock.advance(50_000)
    await client.content.list()
    await client.tokens.settled()
  }
  t.equal(server.tokenCalls.length, 2, 'not retried while the token lasts')
  clock.advance(40_000) // 9 s left
  server.tokenScript.push(INVALID_CLIENT)
  const error = await client.content.list().then(() => undefined, (e: unknown) => e)
  t.same(summary(error), INVALID_CLIENT_ERROR)
  t.equal(server.tokenCalls.length, 3, 'invalid_client is not retried')
  t.same(clock.waits, [])
  t.equal(reported.length, 1)
})

t.test('a 401 from the gateway during the back-off still forces a refresh', async (t) => {
  const { server, clock, client } = await setup(t)
  clock.advance(3301_000)
  server.tokenScript.push(UNAVAILABLE)
  await client.content.list()
  await client.tokens.settled()
  server.script.push({ status: 401, json: { error: 'Unauthenticated.' } })
  t.same(await client.content.list(), { ok: true })
  t.equal(server.tokenCalls.length, 3, 'refreshed although the back-off had not run out')
  t.same(authorizations(server), ['Bearer tok-1', 'Bearer tok-1', 'Bearer tok-1', 'Bearer tok-2'])
})

t.test('a 401 from the gateway after invalid_client throws invalid_client', async (t) => {
  const { server, clock, client } = await setup(t)
  clock.advance(3301_000)
  server.tokenScript.push(INVALID_CLIENT, INVALID_CLIENT)
  await client.content.list()
  await client.tokens.settled()
  server.script.push({ status: 401, json: { error: 'Unauthenticated.' } })
  const error = await client.content.list().then(() => undefined, (e: unknown) => e)
  t.same(summary(error), INVALID_CLIENT_ERROR)
  t.equal(server.tokenCalls.length, 3)
})

t.test('a hook that throws does not fail the call', async (t) => {
  const { server, clock, client } = await setup(t, { onTokenRefreshError: () => { throw new Error('broken hook') } })
  clock.advance(3301_000)
  server.tokenScript.push(UNAVAILABLE)
  t.same(await client.content.list(), { ok: true })
  await client.tokens.settled()
  t.equal(server.tokenCalls.length, 2)
})

t.test('the secret appears in no reported error', async (t) => {
  const { server, clock, client, reported } = await setup(t)
  clock.advance(3301_000)
  server.tokenScript.push({ status: 500, json: { error: 'server_error', error_description: 'echo sekret-value-1' } })
  await client.content.list()
  await client.tokens.settled()
  t.equal(reported.length, 1)
  t.notMatch(JSON.stringify(reported[0].error), /sekret-value-1/)
  t.notMatch((reported[0].error as Error).message, /sekret-value-1/)
})
