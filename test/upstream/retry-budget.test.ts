import t from 'tap'
import { GatewayMetrics } from '../../src/observability/metrics.js'
import { useMetrics } from '../../src/observability/recorders.js'
import { callUpstream } from '../../src/upstream/call.js'
import { RetryBudget } from '../../src/upstream/retry-budget.js'
import { Upstream } from '../../src/upstream/upstream.js'
import type { UpstreamSettings } from '../../src/upstream/settings.js'
import { startBackend, startRelay, testSettings, type Backend } from '../helpers/upstream-servers.js'

/** `retry.budget`: retries sent stay within percent of the requests plus min_per_second a second. */

interface Teardown { teardown: (fn: () => unknown) => void }

t.test('the share: retries of the last ten seconds stay within percent/100 of its requests', async (t) => {
  const clock = { now: 0 }
  const budget = new RetryBudget({ percent: 25, min_per_second: 0 }, () => clock.now)
  t.equal(budget.spend(), undefined, 'starts empty')
  for (let i = 0; i < 3; i++) budget.request(clock.now)
  t.equal(budget.spend(), undefined, '0.75 is less than one retry')
  budget.request(clock.now)
  t.equal(budget.spend(), 'share')
  t.equal(budget.spend(), undefined)
  budget.refund('share')
  t.equal(budget.spend(), 'share', 'a refund gives the share back')
  clock.now = 9_000
  for (let i = 0; i < 4; i++) budget.request(clock.now)
  t.equal(budget.spend(), 'share', 'eight requests in the last ten seconds fund two retries')
  t.equal(budget.spend(), undefined, 'the retry of nine seconds ago still counts')
  clock.now = 10_000
  t.equal(budget.spend(), undefined, 'the first second left the window: four requests fund one retry, already sent')
  clock.now = 30_000
  t.equal(budget.spend(), undefined, 'requests older than ten seconds fund nothing')
})

t.test('a burst of concurrent failures after steady traffic retries its whole share at once', async (t) => {
  const clock = { now: 0 }
  const budget = new RetryBudget({ percent: 20, min_per_second: 1 }, () => clock.now)
  for (let i = 0; i < 100; i++) budget.request(clock.now)
  const tickets: Array<string | undefined> = []
  for (let i = 0; i < 100; i++) tickets.push(budget.spend())
  t.same({ share: tickets.filter(x => x === 'share').length, floor: tickets.filter(x => x === 'floor').length }, { share: 20, floor: 0 },
    'twenty retries for a hundred requests at 20 %, none from a floor that has not filled yet')
})

t.test('the floor: min_per_second a second, at most one second saved up', async (t) => {
  const clock = { now: 0 }
  const floor = new RetryBudget({ percent: 0, min_per_second: 2 }, () => clock.now)
  clock.now = 1_000
  t.same([floor.spend(), floor.spend(), floor.spend()], ['floor', 'floor', undefined], 'two a second')
  clock.now = 1_000_000
  let saved = 0
  while (floor.spend() !== undefined) saved++
  t.equal(saved, 2, 'a quiet spell saves at most one second of min_per_second')
  floor.refund('floor')
  t.equal(floor.spend(), 'floor', 'a refund gives one back')
})

/** Two targets that break off every request (no answer: a retryable failure), counting what reaches them. */
async function failingPair (t: Teardown): Promise<[Backend, Backend]> {
  const pair = await Promise.all([startBackend(t, 'a'), startBackend(t, 'b')])
  for (const backend of pair) backend.handle((req) => { req.socket.destroy() })
  return pair
}

function upstreamOf (t: Teardown, a: Backend, b: Backend, budget?: { percent: number, min_per_second: number }): Upstream {
  const settings: UpstreamSettings = testSettings([a.url, b.url], { retry: { attempts: 2, methods: ['GET'], budget } })
  const upstream = new Upstream(settings, undefined, 'budgeted')
  t.teardown(() => upstream.close())
  return upstream
}

t.test('with a backend failing every request, requests at the backend stay within (1 + percent/100) × callers + min_per_second × seconds', async (t) => {
  const metrics = new GatewayMetrics({ configVersion: () => 1, dependencies: async () => ({}) })
  useMetrics(metrics)
  t.teardown(() => { useMetrics(undefined) })
  const [a, b] = await failingPair(t)
  const upstream = upstreamOf(t, a, b, { percent: 10, min_per_second: 1 })
  const base = await startRelay(t, upstream)
  const started = Date.now()
  const callers = 100
  const statuses = new Set<string>()
  for (let i = 0; i < callers; i++) {
    const res = await fetch(`${base}/x/${i}`)
    statuses.add(`${res.status} ${(await res.json() as { upstream_failure: string }).upstream_failure}`)
  }
  const seconds = Math.ceil((Date.now() - started) / 1000)
  const atBackend = a.seen.length + b.seen.length
  t.ok(atBackend <= 1.1 * callers + 1 * seconds, `${atBackend} requests at the backends for ${callers} callers in ${seconds} s`)
  t.ok(atBackend > callers, 'some retries were sent')
  t.same([...statuses], ['502 reset'], 'a retry not sent leaves the original failure as the answer')
  const text = await metrics.registry.metrics()
  const sent = Number(/lanegate_upstream_retries_total\{upstream="budgeted",result="sent"\} (\d+)/.exec(text)?.[1])
  const over = Number(/lanegate_upstream_retries_total\{upstream="budgeted",result="over_budget"\} (\d+)/.exec(text)?.[1])
  t.same({ sent, over, sum: sent + over }, { sent: atBackend - callers, over: callers - (atBackend - callers), sum: callers })
})

t.test('fifty concurrent callers on a failing backend: a fifth of them retried, not one', async (t) => {
  const [a, b] = await failingPair(t)
  const base = await startRelay(t, upstreamOf(t, a, b, { percent: 20, min_per_second: 0 }))
  await Promise.all(Array.from({ length: 50 }, async (_, i) => { await (await fetch(`${base}/burst/${i}`)).text() }))
  const retries = a.seen.length + b.seen.length - 50
  t.ok(retries >= 5 && retries <= 10, `${retries} retries for 50 concurrent callers at 20 % (at most 10)`)
})

t.test('without a budget every failed GET is retried: twice the requests at the backends', async (t) => {
  const [a, b] = await failingPair(t)
  const base = await startRelay(t, upstreamOf(t, a, b))
  for (let i = 0; i < 20; i++) await (await fetch(`${base}/x/${i}`)).text()
  t.equal(a.seen.length + b.seen.length, 40)
})

t.test('callUpstream spends the same budget', async (t) => {
  const [a, b] = await failingPair(t)
  const upstream = upstreamOf(t, a, b, { percent: 50, min_per_second: 0 })
  const failures: string[] = []
  for (let i = 0; i < 10; i++) {
    await callUpstream(upstream, { method: 'GET', path: '/x', timeoutMs: 5000, maxBodyBytes: 64, maxErrorBodyBytes: 64 })
      .catch((error: { fields: { upstream_failure: string } }) => { failures.push(error.fields.upstream_failure) })
  }
  t.equal(failures.length, 10)
  t.equal(a.seen.length + b.seen.length, 15, '10 calls, 5 retries (half of them)')
})
