import { rm } from 'node:fs/promises'
import t from 'tap'
import { RateLimiterMemory, type RateLimiterAbstract } from 'rate-limiter-flexible'
import type { GatewayConfig } from '../../src/config/types.js'
import type { LimiterRegistry } from '../../src/runtime/shared-resources.js'
import { buildOauthApp, postToken, type OauthApp, type OauthAppOptions } from '../helpers/oauth-app.js'
import { buildOauthConfig, SECRETS } from '../helpers/oauth-config.js'
import { waitFor } from '../helpers/wait-for.js'

const config = await buildOauthConfig()
t.teardown(() => rm(config.server.data_dir, { recursive: true, force: true }))

async function app (t: { teardown (fn: () => unknown): void }, options: OauthAppOptions = {}): Promise<OauthApp> {
  const built = await buildOauthApp({ config, ...options })
  t.teardown(() => built.close())
  return built
}

function withIssuer (patch: Partial<GatewayConfig['issuer']>): GatewayConfig {
  return { ...config, issuer: { ...config.issuer, ...patch } }
}

const form = (clientId: string, secret: string) => ({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret })
const X = '203.0.113.10'
const Y = '198.51.100.20'

t.test('A9: 60 token requests a minute per client id, the 61st → 429 with retry_after equal to Retry-After', async (t) => {
  const { app: server } = await app(t)
  for (let i = 1; i <= 60; i++) {
    const res = await postToken(server, form('content-reader', SECRETS.content), { remoteAddress: i % 2 === 0 ? X : Y })
    if (res.statusCode !== 200) t.fail(`request ${i}: ${res.statusCode} ${res.body}`)
  }
  const res = await postToken(server, form('content-reader', SECRETS.content))
  t.equal(res.statusCode, 429)
  const body = res.json()
  t.same(body, {
    error: 'rate_limit_exceeded',
    error_description: 'Too many token requests; retry after the indicated number of seconds.',
    retry_after: body.retry_after,
  })
  t.ok(Number.isInteger(body.retry_after) && body.retry_after >= 1 && body.retry_after <= 60, `retry_after ${body.retry_after}`)
  t.equal(res.headers['retry-after'], String(body.retry_after))
  t.match(res.headers, { 'cache-control': 'no-store', pragma: 'no-cache' })
  const other = await postToken(server, form('checkout', SECRETS.checkout))
  t.equal(other.statusCode, 200, 'another client is not affected')
})

t.test('A9: the client count resets after the window', async (t) => {
  const built = await app(t)
  built.setConfig(withIssuer({ token_rate_limit: { points: 2, window_seconds: 1 } }))
  t.equal((await postToken(built.app, form('content-reader', SECRETS.content))).statusCode, 200)
  t.equal((await postToken(built.app, form('content-reader', SECRETS.content))).statusCode, 200)
  t.equal((await postToken(built.app, form('content-reader', SECRETS.content))).statusCode, 429)
  // The window ending (its 1 s) is the event: a request is admitted again.
  await waitFor(async () => (await postToken(built.app, form('content-reader', SECRETS.content))).statusCode === 200, { what: 'the 1 s window to end', intervalMs: 100 })
  t.pass('admitted again once the window ended')
})

t.test('A9: bad secrets from IP X are braked at X and do not lock the real client out from IP Y', async (t) => {
  const { app: server } = await app(t)
  for (let i = 0; i < 5; i++) t.equal((await postToken(server, form('content-reader', 'guess-' + i), { remoteAddress: X })).statusCode, 401)
  const braked = await postToken(server, form('content-reader', SECRETS.content), { remoteAddress: X })
  t.equal(braked.statusCode, 429, 'X is braked, even with the right secret, before any hashing')
  t.same(braked.json(), {
    error: 'rate_limit_exceeded',
    error_description: 'Too many failed client authentications from this address; retry after the indicated number of seconds.',
    retry_after: braked.json().retry_after,
  })
  t.equal(braked.headers['retry-after'], String(braked.json().retry_after))
  const fromY = await postToken(server, form('content-reader', SECRETS.content), { remoteAddress: Y })
  t.equal(fromY.statusCode, 200, 'the real client from Y is served')
})

t.test('A9: failed authentications do not use up the client quota', async (t) => {
  const built = await app(t)
  built.setConfig(withIssuer({ failed_auth_limit: { points: 1000, window_seconds: 60 } }))
  for (let i = 0; i < 60; i++) {
    const res = await postToken(built.app, form('content-reader', 'guess-' + i), { remoteAddress: X })
    if (res.statusCode !== 401) t.fail(`bad secret ${i}: ${res.statusCode}`)
  }
  for (let i = 1; i <= 60; i++) {
    const res = await postToken(built.app, form('content-reader', SECRETS.content), { remoteAddress: Y })
    if (res.statusCode !== 200) t.fail(`real request ${i}: ${res.statusCode} ${res.body}`)
  }
  t.equal((await postToken(built.app, form('content-reader', SECRETS.content), { remoteAddress: Y })).statusCode, 429, 'the 61st real one is limited')
})

t.test('requests rejected before authentication (bad grant type) count against neither limit', async (t) => {
  const built = await app(t)
  built.setConfig(withIssuer({ failed_auth_limit: { points: 1, window_seconds: 60 }, token_rate_limit: { points: 1, window_seconds: 60 } }))
  for (let i = 0; i < 3; i++) {
    t.equal((await postToken(built.app, { ...form('content-reader', SECRETS.content), grant_type: 'password' }, { remoteAddress: X })).statusCode, 400)
  }
  t.equal((await postToken(built.app, form('content-reader', SECRETS.content), { remoteAddress: X })).statusCode, 200)
})

/** A registry whose limiters fail like a Redis that is down. */
function failingRegistry (onStoreError: 'open' | 'closed'): LimiterRegistry {
  const failing = new RateLimiterMemory({ points: 1, duration: 60 }) as RateLimiterAbstract
  const down = async () => { throw new Error('connect ECONNREFUSED 127.0.0.1:6379') }
  Object.assign(failing, { consume: down, get: down, penalty: down })
  return { onStoreError, get: () => failing, counter: () => ({ points: 1, count: down }) }
}

t.test('D4: limiter store down with on_store_error open → tokens are still issued', async (t) => {
  const { app: server } = await app(t, { limiters: failingRegistry('open') })
  t.equal((await postToken(server, form('content-reader', SECRETS.content))).statusCode, 200)
  const wrong = await postToken(server, form('content-reader', 'wrong'))
  t.equal(wrong.statusCode, 401, 'a failure is still a failure')
})

t.test('D4: limiter store down with on_store_error closed → 503, never a bogus 429', async (t) => {
  const { app: server } = await app(t, { limiters: failingRegistry('closed') })
  const res = await postToken(server, form('content-reader', SECRETS.content))
  t.equal(res.statusCode, 503)
  t.same(res.json(), { error: 'temporarily_unavailable', error_description: 'The gateway is shutting down or a dependency is unavailable; retry shortly.' })
})
