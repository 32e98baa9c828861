import t from 'tap'
import { GatewayMetrics } from '../../src/observability/metrics.js'
import { useMetrics } from '../../src/observability/recorders.js'
import type { OutlierEjectionSettings } from '../../src/upstream/outlier-ejection.js'
import { Upstream } from '../../src/upstream/upstream.js'
import { startBackend, startRelay, testSettings, type Backend } from '../helpers/upstream-servers.js'
import { waitFor } from '../helpers/wait-for.js'

/** Outlier ejection on real backends: a target failing far more than its siblings is left out a while. */

interface Teardown { teardown: (fn: () => unknown) => void }

const OUTLIERS: OutlierEjectionSettings = {
  interval_seconds: 3600, // rounds are run by the test (evaluate), except in the timer test
  min_requests: 4,
  above_siblings_percent: 50,
  failure_statuses: [500, 502, 503, 504],
  eject_seconds: 30,
  max_ejected_percent: 34,
}

function upstreamOf (t: Teardown, backends: Backend[], outliers: OutlierEjectionSettings = OUTLIERS): Upstream {
  const upstream = new Upstream(testSettings(backends.map((b) => b.url), { outlier_ejection: outliers }), undefined, 'outliers')
  t.teardown(() => upstream.close())
  return upstream
}

const fail503 = (_req: unknown, res: import('node:http').ServerResponse): void => { res.writeHead(503).end('down') }

async function spread (base: string, n: number): Promise<string[]> {
  const bodies: string[] = []
  for (let i = 0; i < n; i++) bodies.push(await (await fetch(`${base}/${i}`)).text())
  return bodies
}

t.test('a target failing far above its siblings is ejected; its traffic goes to the others; siblings failing alike are not', async (t) => {
  const metrics = new GatewayMetrics({ configVersion: () => 1, dependencies: async () => ({}) })
  useMetrics(metrics)
  t.teardown(() => { useMetrics(undefined) })
  const [a, b, c] = await Promise.all(['a', 'b', 'c'].map((n) => startBackend(t, n))) as [Backend, Backend, Backend]
  a.handle(fail503)
  const upstream = upstreamOf(t, [a, b, c])
  const base = await startRelay(t, upstream)
  await spread(base, 12) // 4 each: a 100 % failures, b and c 0 %
  t.same(upstream.outliers?.evaluate(), [a.url])
  const seen = a.seen.length
  t.same(new Set(await spread(base, 6)), new Set(['b', 'c']))
  t.equal(a.seen.length, seen, 'the outlier got nothing')
  t.equal(upstream.targets[0]?.state, 'ejected')
  t.match(await metrics.registry.metrics(), `lanegate_upstream_ejections_total{service="outliers",target="${a.url}",reason="outlier"} 1`)

  // Every target failing alike: nobody stands out.
  const [d, e, f] = await Promise.all(['d', 'e', 'f'].map((n) => startBackend(t, n))) as [Backend, Backend, Backend]
  for (const x of [d, e, f]) x.handle(fail503)
  const alike = upstreamOf(t, [d, e, f])
  const alikeBase = await startRelay(t, alike)
  await spread(alikeBase, 12)
  t.same(alike.outliers?.evaluate(), [])
})

t.test('never more than max_ejected_percent of the targets at once, the worst first; a target below min_requests is not judged', async (t) => {
  const [a, b, c] = await Promise.all(['a', 'b', 'c'].map((n) => startBackend(t, n))) as [Backend, Backend, Backend]
  a.handle(fail503)
  let bAnswers = 0
  b.handle((_req, res) => { if (bAnswers++ % 4 === 0) res.end('b'); else res.writeHead(503).end('down') }) // 75 % failures
  const upstream = upstreamOf(t, [a, b, c])
  const base = await startRelay(t, upstream)
  await spread(base, 12)
  t.same(upstream.outliers?.evaluate(), [a.url], 'one of three (34 %): a, the worse, only')
  await spread(base, 2) // b and c get one each: below min_requests
  t.same(upstream.outliers?.evaluate(), [], 'nothing judged on too few answers, and a still holds the one place')
})

t.test('the comparison runs every interval_seconds on its own', async (t) => {
  const [a, b] = await Promise.all(['a', 'b'].map((n) => startBackend(t, n))) as [Backend, Backend]
  a.handle(fail503)
  const upstream = upstreamOf(t, [a, b], { ...OUTLIERS, interval_seconds: 1, min_requests: 1, max_ejected_percent: 50 })
  const base = await startRelay(t, upstream)
  await waitFor(async () => {
    await spread(base, 4)
    return upstream.targets[0]?.ejected === true
  }, { what: 'a ejected by the interval\'s comparison' })
  t.same(new Set(await spread(base, 4)), new Set(['b']))
})
