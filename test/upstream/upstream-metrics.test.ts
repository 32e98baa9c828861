import t from 'tap'
import { GatewayMetrics } from '../../src/observability/metrics.js'
import { useMetrics } from '../../src/observability/recorders.js'
import { callUpstream } from '../../src/upstream/call.js'
import type { UpstreamSettings } from '../../src/upstream/settings.js'
import { Upstream } from '../../src/upstream/upstream.js'
import { histogramCount } from '../helpers/prometheus.js'
import { deadPort, startBackend, startRelay, testSettings } from '../helpers/upstream-servers.js'

/** What these helpers need of a tap test. */
interface Teardown { teardown: (fn: () => unknown) => void }

// The engine records every request it sends in lanegate_upstream_* (once, whatever the retries) and sends the
// request's trace context: what the live relay, fan-out and timeseries get without doing it themselves.

const TRACE = { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-1111111111111111-01', tracestate: 'vendor=abc' }

/** Fresh process metrics for one test (the recorders' target), removed at teardown. */
function freshMetrics (t: Teardown): GatewayMetrics {
  const metrics = new GatewayMetrics({ configVersion: () => 1, dependencies: async () => ({}) })
  useMetrics(metrics)
  t.teardown(() => { useMetrics(undefined) })
  return metrics
}

/** An Upstream named `name` (its metrics label), closed at teardown. */
function namedUpstream (t: Teardown, settings: UpstreamSettings, name: string): Upstream {
  const upstream = new Upstream(settings, undefined, name)
  t.teardown(() => upstream.close())
  return upstream
}

/** `lanegate_upstream_requests_total` by outcome for `upstream`, from the exposition text (absent series left out). */
async function outcomes (metrics: GatewayMetrics, upstream: string): Promise<Record<string, number>> {
  const text = await metrics.registry.metrics()
  const found: Record<string, number> = {}
  for (const line of text.split('\n')) {
    const m = /^lanegate_upstream_requests_total\{upstream="([^"]+)",outcome="([^"]+)"\} (\S+)$/.exec(line)
    if (m !== null && m[1] === upstream) found[m[2] as string] = Number(m[3])
  }
  return found
}

t.test('a relayed GET retried after a refusal counts once, as ok, under the upstream\'s name', async (t) => {
  const metrics = freshMetrics(t)
  const b = await startBackend(t, 'b')
  const upstream = namedUpstream(t, testSettings([`http://127.0.0.1:${await deadPort()}`, b.url], { retry: { attempts: 2, methods: ['GET'] } }), 'org_a')
  const base = await startRelay(t, upstream)
  const res = await fetch(`${base}/x`)
  t.same([res.status, await res.text()], [200, 'b'])
  t.same(await outcomes(metrics, 'org_a'), { ok: 1 })
  t.equal(histogramCount(await metrics.registry.metrics(), 'lanegate_upstream_duration_seconds', { upstream: 'org_a' }), 1)
})

t.test('relayed failures count by outcome: mirrored 4xx and 5xx, timeout, and every other no-answer kind as unreachable', async (t) => {
  const metrics = freshMetrics(t)
  const a = await startBackend(t, 'a')
  a.handle((req, res) => {
    if (req.url === '/stall') return
    res.writeHead(req.url === '/missing' ? 404 : 503).end('no')
  })
  const fast = { timeouts: { connect_ms: 1000, response_ms: 200, body_idle_ms: 1000 } }
  const live = await startRelay(t, namedUpstream(t, testSettings([a.url], fast), 'org_a'))
  const dead = await startRelay(t, namedUpstream(t, testSettings([`http://127.0.0.1:${await deadPort()}`]), 'org_dead'))
  const statuses = []
  for (const url of [`${live}/missing`, `${live}/down`, `${live}/stall`, `${dead}/x`]) statuses.push((await fetch(url)).status)
  t.same(statuses, [404, 503, 502, 502])
  t.same(await outcomes(metrics, 'org_a'), { http_4xx: 1, http_5xx: 1, timeout: 1 })
  t.same(await outcomes(metrics, 'org_dead'), { unreachable: 1 })
})

t.test('a relay sends the request\'s trace context, never the caller\'s own traceparent', async (t) => {
  freshMetrics(t)
  const a = await startBackend(t, 'a')
  const base = await startRelay(t, namedUpstream(t, testSettings([a.url]), 'org_a'), { trace: TRACE })
  await (await fetch(`${base}/x`, { headers: { traceparent: '00-ffffffffffffffffffffffffffffffff-2222222222222222-01', tracestate: 'caller=1' } })).text()
  t.same([a.seen[0]?.headers.traceparent, a.seen[0]?.headers.tracestate], [TRACE.traceparent, TRACE.tracestate])
})

t.test('callUpstream sends the trace context and counts the call by its answer or its failure', async (t) => {
  const metrics = freshMetrics(t)
  const a = await startBackend(t, 'a')
  a.handle((req, res) => { res.writeHead(req.url === '/fail' ? 500 : 200).end('{}') })
  const upstream = namedUpstream(t, testSettings([a.url]), 'timeseries')
  const call = (path: string) => callUpstream(upstream, { method: 'POST', path, body: '{}', timeoutMs: 1000, maxBodyBytes: 1024, maxErrorBodyBytes: 64, trace: TRACE })
  t.same([(await call('/query')).status, (await call('/fail')).status], [200, 500])
  t.same([a.seen[0]?.headers.traceparent, a.seen[0]?.headers.tracestate], [TRACE.traceparent, TRACE.tracestate])
  const dead = namedUpstream(t, testSettings([`http://127.0.0.1:${await deadPort()}`]), 'gone')
  await t.rejects(callUpstream(dead, { method: 'POST', path: '/q', timeoutMs: 1000, maxBodyBytes: 1024, maxErrorBodyBytes: 64 }), { code: 'upstream_error' })
  t.same(await outcomes(metrics, 'timeseries'), { ok: 1, http_5xx: 1 })
  t.same(await outcomes(metrics, 'gone'), { unreachable: 1 })
})
