import t from 'tap'
import { GatewayMetrics } from '../../src/observability/metrics.js'
import { useMetrics } from '../../src/observability/recorders.js'
import { applySharedTransition } from '../../src/upstream/breaker-sharing.js'
import { callUpstream } from '../../src/upstream/call.js'
import type { CircuitBreakerSettings } from '../../src/upstream/circuit-breaker.js'
import { UpstreamRegistry } from '../../src/upstream/registry.js'
import type { UpstreamSettings } from '../../src/upstream/settings.js'
import { Upstream } from '../../src/upstream/upstream.js'
import { startBackend, startRelay, testSettings } from '../helpers/upstream-servers.js'
import { waitFor } from '../helpers/wait-for.js'

/** Circuit breakers in the engine, on real backends: who gets traffic, what the caller sees, what is counted. */

interface Teardown { teardown: (fn: () => unknown) => void }

const BREAKER: CircuitBreakerSettings = { failure_statuses: [500, 502, 503, 504], consecutive_failures: 2, open_seconds: 1, max_open_seconds: 4, half_open_requests: 1 }

function named (t: Teardown, settings: UpstreamSettings, name: string): Upstream {
  const upstream = new Upstream(settings, undefined, name)
  t.teardown(() => upstream.close())
  return upstream
}

const failing = (status: number) => (_req: unknown, res: import('node:http').ServerResponse): void => {
  res.writeHead(status, { 'content-type': 'text/plain' })
  res.end('down')
}

async function get (url: string): Promise<{ status: number, body: string, retryAfter: string | null }> {
  const res = await fetch(url)
  return { status: res.status, body: await res.text(), retryAfter: res.headers.get('retry-after') }
}

t.test('a target answering 503 is opened after consecutive_failures; its traffic goes to the sibling; it is probed and closed once it recovers', async (t) => {
  const a = await startBackend(t, 'a')
  const b = await startBackend(t, 'b')
  a.handle(failing(503))
  const upstream = named(t, testSettings([a.url, b.url], { circuit_breaker: BREAKER }), 'pricing')
  const base = await startRelay(t, upstream)
  const answers: number[] = []
  for (let i = 0; i < 8; i++) answers.push((await get(`${base}/p/${i}`)).status)
  t.same(answers, [503, 200, 503, 200, 200, 200, 200, 200], 'a is picked twice (round robin), then left out')
  t.equal(a.seen.length, 2, 'the open target received nothing more')
  t.equal(upstream.targets[0]?.breaker?.state, 'open')

  a.handle((_req, res) => { res.end('a again') })
  // Once open_seconds passed, one real request is let through to a as a trial: it succeeds and closes the breaker.
  await waitFor(async () => (await get(`${base}/probe`)).body === 'a again', { what: 'a trial request reaching the recovered target' })
  t.equal(upstream.targets[0]?.breaker?.state, 'closed')
  const after = [await get(`${base}/x`), await get(`${base}/y`)].map((r) => r.body).sort()
  t.same(after, ['a again', 'b'], 'both targets share the traffic again')
})

t.test('with a single target open, callers get 503 circuit_open with Retry-After at once, and the backend is not contacted', async (t) => {
  const a = await startBackend(t, 'a')
  a.handle(failing(500))
  const upstream = named(t, testSettings([a.url], { circuit_breaker: { ...BREAKER, consecutive_failures: 1, open_seconds: 30, max_open_seconds: 60 } }), 'single')
  const base = await startRelay(t, upstream)
  t.equal((await get(`${base}/one`)).status, 500)
  const refused = await get(`${base}/two`)
  t.same(refused, {
    status: 503,
    body: JSON.stringify({ error: 'upstream_error', upstream_status: 0, upstream_failure: 'circuit_open', upstream_body: '', message: 'The upstream service is failing: its circuit breaker is open.' }),
    retryAfter: '30',
  })
  t.equal(a.seen.length, 1, 'the second request never reached the backend')
  t.equal(a.openConnections() <= 1, true)
})

t.test('the slow rule opens a target whose answers take too long', async (t) => {
  const slow = await startBackend(t, 'slow')
  slow.handle((_req, res) => { setTimeout(() => res.end('late'), 300) })
  const breaker: CircuitBreakerSettings = { failure_statuses: [500], slow: { ms: 200, percent: 50, window_seconds: 30, min_requests: 2 }, open_seconds: 30, max_open_seconds: 30, half_open_requests: 1 }
  const upstream = named(t, testSettings([slow.url], { circuit_breaker: breaker }), 'slow')
  const base = await startRelay(t, upstream)
  t.same([(await get(`${base}/1`)).body, (await get(`${base}/2`)).body], ['late', 'late'], 'slow answers are still relayed')
  const third = await get(`${base}/3`)
  t.same([third.status, JSON.parse(third.body).upstream_failure], [503, 'circuit_open'])
  t.equal(slow.seen.length, 2)
})

t.test('no-answer failures count too, and callUpstream honours the breaker the same way', async (t) => {
  const a = await startBackend(t, 'a')
  a.handle(() => { /* never answers */ })
  const upstream = named(t, testSettings([a.url], {
    timeouts: { connect_ms: 1000, response_ms: 100, body_idle_ms: 1000 },
    circuit_breaker: { ...BREAKER, consecutive_failures: 2, open_seconds: 30, max_open_seconds: 30 },
  }), 'calls')
  // A buffered call's deadline is its own timeoutMs (the whole answer), not response_ms: short, so the test is too.
  const call = (): Promise<unknown> => callUpstream(upstream, { method: 'GET', path: '/x', timeoutMs: 250, maxBodyBytes: 64, maxErrorBodyBytes: 64 })
    .then(() => 'answered', (error: { status: number, fields: Record<string, unknown>, headers: Record<string, string> }) => [error.status, error.fields.upstream_failure, error.headers['retry-after']])
  t.same(await call(), [502, 'timeout', undefined])
  t.same(await call(), [502, 'timeout', undefined])
  t.same(await call(), [503, 'circuit_open', '30'])
  t.equal(a.seen.length, 2, 'the two timed-out calls reached it; none after it opened')
})

t.test('a body too large for the caller is not the target\'s failure: the breaker stays closed, no retry is sent', async (t) => {
  const a = await startBackend(t, 'a')
  const b = await startBackend(t, 'b')
  for (const backend of [a, b]) backend.handle((_req, res) => { res.writeHead(200, { 'content-type': 'text/plain' }); res.end('x'.repeat(1000)) })
  const upstream = named(t, testSettings([a.url, b.url], {
    circuit_breaker: { ...BREAKER, consecutive_failures: 1, open_seconds: 30, max_open_seconds: 30 },
  }), 'large')
  const call = (): Promise<unknown> => callUpstream(upstream, { method: 'GET', path: '/x', timeoutMs: 5000, maxBodyBytes: 64, maxErrorBodyBytes: 64, overLimit: 'too_large' })
    .then(() => 'answered', (error: { status: number, fields: Record<string, unknown> }) => [error.status, error.fields.upstream_failure])
  for (let i = 0; i < 4; i++) t.same(await call(), [502, 'too_large'])
  t.equal(a.seen.length + b.seen.length, 4, 'one attempt per call: another target would answer the same')
  t.same(upstream.targets.map((target) => target.breaker?.state), ['closed', 'closed'])
})

t.test('callUpstream hands a 2xx body over as the bytes received (binary, another charset) beside its UTF-8 text', async (t) => {
  const bytes = Buffer.from([0xff, 0xfe, 0x00, 0xe9, 0x41])
  const a = await startBackend(t, 'a')
  a.handle((_req, res) => { res.writeHead(200, { 'content-type': 'application/octet-stream' }); res.end(bytes) })
  const upstream = named(t, testSettings([a.url]), 'bytes')
  const answer = await callUpstream(upstream, { method: 'GET', path: '/x', timeoutMs: 5000, maxBodyBytes: 64, maxErrorBodyBytes: 64 })
  t.same([...answer.bodyBytes], [...bytes])
  t.not(Buffer.from(answer.body).equals(bytes), 'the text could not have given the bytes back')
})

t.test('an opening another worker shared keeps the target out here too', async (t) => {
  const a = await startBackend(t, 'a')
  const b = await startBackend(t, 'b')
  const upstream = named(t, testSettings([a.url, b.url], { circuit_breaker: BREAKER }), 'shared-one')
  const base = await startRelay(t, upstream)
  applySharedTransition({ upstream: 'shared-one', url: a.url, to: 'open', reason: 'consecutive_failures', openMs: 30_000, until: Date.now() + 30_000 })
  const bodies: string[] = []
  for (let i = 0; i < 4; i++) bodies.push((await get(`${base}/${i}`)).body)
  t.same(bodies, ['b', 'b', 'b', 'b'])
  t.equal(a.seen.length, 0)
  applySharedTransition({ upstream: 'shared-one', url: a.url, to: 'closed', reason: 'half_open_success', openMs: 0, until: 0 })
  t.same([(await get(`${base}/x`)).body, (await get(`${base}/y`)).body].sort(), ['a', 'b'])
})

t.test('an opening shared before this process built the upstream (a lane built on first use) holds when it is built', async (t) => {
  const a = await startBackend(t, 'a')
  applySharedTransition({ upstream: 'built-later', url: a.url, to: 'open', reason: 'consecutive_failures', openMs: 30_000, until: Date.now() + 30_000 })
  const upstream = named(t, testSettings([a.url], { circuit_breaker: BREAKER }), 'built-later')
  t.equal(upstream.targets[0]?.breaker?.state, 'open')
  const base = await startRelay(t, upstream)
  t.equal((await get(`${base}/x`)).status, 503)
  t.equal(a.seen.length, 0, 'nothing sent to the target other workers found failing')
})

t.test('a reload that keeps the breaker settings keeps its state; new settings start closed; none removes it', async (t) => {
  const a = await startBackend(t, 'a')
  const settings = testSettings([a.url], { circuit_breaker: { ...BREAKER, consecutive_failures: 1, open_seconds: 30, max_open_seconds: 30 } })
  const upstream = named(t, settings, 'reloaded')
  const base = await startRelay(t, upstream)
  a.handle(failing(502))
  await get(`${base}/x`)
  t.equal(upstream.targets[0]?.breaker?.state, 'open')
  upstream.reconcile({ ...settings, circuit_breaker: { ...BREAKER, consecutive_failures: 1, open_seconds: 30, max_open_seconds: 30 } })
  t.equal(upstream.targets[0]?.breaker?.state, 'open', 'equal settings (another object): kept')
  const before = upstream.targets[0]
  upstream.reconcile({ ...settings, timeouts: { ...settings.timeouts, response_ms: settings.timeouts.response_ms + 1 } })
  t.not(upstream.targets[0], before, 'new pool settings rebuild the target')
  t.equal(upstream.targets[0]?.breaker?.state, 'open', 'and keep what its breaker learnt')
  t.equal((await get(`${base}/y`)).status, 503, 'the rebuilt target stays out: circuit_open')
  upstream.reconcile({ ...settings, circuit_breaker: { ...BREAKER, consecutive_failures: 3, open_seconds: 30, max_open_seconds: 30 } })
  t.equal(upstream.targets[0]?.breaker?.state, 'closed', 'changed settings: a fresh breaker')
  upstream.reconcile({ ...settings, circuit_breaker: undefined })
  t.equal(upstream.targets[0]?.breaker, undefined)
})

t.test('metrics: the circuit state gauge per service and target, transitions and circuit_open outcomes counted', async (t) => {
  const registry = new UpstreamRegistry<UpstreamSettings>((s) => s)
  t.teardown(() => registry.close())
  const metrics = new GatewayMetrics({ configVersion: () => 1, dependencies: async () => ({}), upstreamCircuits: () => registry.circuitStates() })
  useMetrics(metrics)
  t.teardown(() => { useMetrics(undefined) })
  const a = await startBackend(t, 'a')
  a.handle(failing(503))
  const settings = testSettings([a.url], { circuit_breaker: { ...BREAKER, consecutive_failures: 1, open_seconds: 30, max_open_seconds: 30 } })
  registry.reconcile(new Map([['pricing', settings]]))
  const base = await startRelay(t, registry.get('pricing', settings))
  t.equal((await get(`${base}/x`)).status, 503)
  t.equal(JSON.parse((await get(`${base}/y`)).body).upstream_failure, 'circuit_open')
  const text = await metrics.registry.metrics()
  const lines = text.split('\n').filter((l) => /^lanegate_upstream_(circuit|requests_total)/.test(l))
  t.same(lines.sort(), [
    `lanegate_upstream_circuit_state{service="pricing",target="${a.url}"} 2`,
    `lanegate_upstream_circuit_transitions_total{service="pricing",target="${a.url}",to="open"} 1`,
    'lanegate_upstream_requests_total{upstream="pricing",outcome="circuit_open"} 1',
    'lanegate_upstream_requests_total{upstream="pricing",outcome="http_5xx"} 1',
  ])
})

t.test('a WebSocket upgrade counts against the breaker, and an open one refuses it with 503 circuit_open, nothing sent', async (t) => {
  const { connectUpstreamWebSocket } = await import('../../src/upstream/websocket-connect.js')
  const a = await startBackend(t, 'a')
  a.handle(failing(503)) // refuses every upgrade with 503
  const upstream = named(t, testSettings([a.url], { circuit_breaker: { ...BREAKER, consecutive_failures: 1, open_seconds: 30, max_open_seconds: 30 } }), 'ws')
  const input = { req: { headers: {} } as import('node:http').IncomingMessage, path: '/socket', clientIp: '127.0.0.1', requestId: 'r', maxMessageBytes: 1024, maxErrorBodyBytes: 64 }
  const first = await connectUpstreamWebSocket(upstream, input).then(() => 'open', (error: { status: number }) => error.status)
  t.equal(first, 503, 'the refused upgrade mirrors the 503')
  const second = await connectUpstreamWebSocket(upstream, input).then(() => 'open', (error: { status: number, fields: Record<string, unknown>, headers: Record<string, string> }) => [error.status, error.fields.upstream_failure, error.headers['retry-after']])
  t.same(second, [503, 'circuit_open', '30'])
  t.equal(a.seen.length, 1)
})
