import t from 'tap'
import { callUpstream, type CallInput } from '../../src/upstream/call.js'
import { startBackend, testSettings, testUpstream } from '../helpers/upstream-servers.js'
import { waitFor } from '../helpers/wait-for.js'

const GET: CallInput = { method: 'GET', path: '/', timeoutMs: 3000, maxBodyBytes: 1024, maxErrorBodyBytes: 64 }

t.test('reconcile: a removed target finishes its in-flight request, then its pool closes; kept targets keep their pool', async (t) => {
  const a = await startBackend(t, 'a')
  const b = await startBackend(t, 'b')
  let release: (() => void) | undefined
  b.handle((_req, res) => { release = () => res.end('b-late') })
  const settings = testSettings([a.url, b.url])
  const upstream = testUpstream(t, settings)
  const [ta, tb] = upstream.targets
  t.equal((await callUpstream(upstream, GET)).body, 'a')
  const inFlight = callUpstream(upstream, GET)
  await waitFor(() => release !== undefined, { what: 'the request to reach b' })

  upstream.reconcile({ ...settings, targets: [{ url: a.url, weight: 1 }] })
  t.equal(upstream.targets.length, 1)
  t.equal(upstream.targets[0], ta, 'the kept target is the same object (pool, health and counters kept)')
  t.equal(tb?.pool.closed, true, 'the removed pool takes no new requests')
  t.equal(tb?.pool.destroyed, false, 'but is not destroyed while a request is in flight')
  release?.()
  t.equal((await inFlight).body, 'b-late', 'the in-flight request completed')
  t.same([(await callUpstream(upstream, GET)).body, (await callUpstream(upstream, GET)).body], ['a', 'a'])
})

t.test('reconcile: a new target and a new weight take effect at once', async (t) => {
  const a = await startBackend(t, 'a')
  const b = await startBackend(t, 'b')
  const settings = testSettings([a.url])
  const upstream = testUpstream(t, settings)
  upstream.reconcile({ ...settings, targets: [{ url: a.url, weight: 1 }, { url: b.url, weight: 3 }] })
  for (let i = 0; i < 8; i++) await callUpstream(upstream, GET)
  t.same([a.seen.length, b.seen.length], [2, 6])
})

t.test('reconcile: changed timeouts replace every pool', async (t) => {
  const a = await startBackend(t, 'a')
  const settings = testSettings([a.url])
  const upstream = testUpstream(t, settings)
  const before = upstream.targets[0]
  upstream.reconcile({ ...settings, timeouts: { ...settings.timeouts, response_ms: 999 } })
  t.not(upstream.targets[0], before)
  t.equal(before?.pool.closed, true)
  t.equal((await callUpstream(upstream, GET)).body, 'a')
})
