import t from 'tap'
import { callUpstream, type CallInput } from '../../src/upstream/call.js'
import { UpstreamRegistry } from '../../src/upstream/registry.js'
import type { UpstreamSettings } from '../../src/upstream/settings.js'
import { SingleUseUpstream } from '../../src/upstream/single-use.js'
import { startBackend, startRelay, testSettings, type Backend } from '../helpers/upstream-servers.js'
import { waitFor } from '../helpers/wait-for.js'

/**
 * A registry the snapshots declare (`reconcile`: the proxy blocks' upstreams, built with the snapshot; the lanes,
 * built at first use): retired with it, never brought back by a late request, whose single-use upstream closes
 * its pool once that request is done. Backends keep idle keep-alive sockets a minute, so a socket that closes was
 * closed by the gateway's side.
 */
const GET: CallInput = { method: 'GET', path: '/x', timeoutMs: 2000, maxBodyBytes: 1024, maxErrorBodyBytes: 64 }
const probed = (url: string): UpstreamSettings => testSettings([url], { health: { active: { path: '/health', interval_seconds: 0.1 } } })
const probes = (backend: Backend): number => backend.seen.filter((r) => r.url === '/health').length

function registry (t: { teardown (fn: () => unknown): void }, build?: 'on_first_use'): UpstreamRegistry<UpstreamSettings> {
  const upstreams = new UpstreamRegistry<UpstreamSettings>((settings) => settings, undefined, { build })
  t.teardown(() => upstreams.close())
  return upstreams
}

t.test('reconcile builds a declared upstream at once: its first probe runs before any request', async (t) => {
  const a = await startBackend(t, 'a')
  const upstreams = registry(t)
  upstreams.reconcile(new Map([['p', testSettings([a.url], { health: { active: { path: '/health', interval_seconds: 60 } } })]]))
  await waitFor(() => probes(a) === 1, { what: 'probes(a) === 1' })
  t.same(a.seen.map((r) => `${r.method} ${r.url}`), ['GET /health'], 'one probe, no interval waited')
  t.same(upstreams.keys(), ['p'])
})

t.test('a renamed key: the old upstream stops probing and closes, the new one probes and serves', async (t) => {
  const a = await startBackend(t, 'a')
  const b = await startBackend(t, 'b')
  const upstreams = registry(t)
  const settingsA = probed(a.url)
  upstreams.reconcile(new Map([['p', settingsA]]))
  const first = upstreams.get('p', settingsA)
  t.equal((await callUpstream(first, GET)).body, 'a')
  const settingsB = probed(b.url)
  upstreams.reconcile(new Map([['r', settingsB]]))
  t.same(upstreams.keys(), ['r'])
  await waitFor(() => a.openConnections() === 0, { what: 'a.openConnections() === 0' })
  const seenByA = a.seen.length
  await waitFor(() => probes(b) >= 2, { what: 'probes(b) >= 2' })
  t.equal(a.seen.length, seenByA, 'the retired upstream sends nothing more')
  t.equal((await callUpstream(upstreams.get('r', settingsB), GET)).body, 'b')
  upstreams.reconcile(new Map([['p', settingsA]]))
  t.not(upstreams.get('p', settingsA), first, 'a key declared again gets a new upstream, not the retired one')
  t.equal((await callUpstream(upstreams.get('p', settingsA), GET)).body, 'a')
})

t.test('a key the last snapshot did not declare (a request that straddled its removal) is served, and kept nowhere', async (t) => {
  const a = await startBackend(t, 'a')
  a.server.keepAliveTimeout = 60_000
  const upstreams = registry(t)
  upstreams.reconcile(new Map())
  const settings = probed(a.url)
  const oneOff = upstreams.get('gone', settings)
  t.ok(oneOff instanceof SingleUseUpstream)
  t.equal((await callUpstream(oneOff, GET)).body, 'a')
  t.same(upstreams.keys(), [], 'not added back')
  await waitFor(() => a.openConnections() === 0, { what: 'a.openConnections() === 0' })
  t.pass('its pool closed its connection once the request was done (no pool or socket left per call)')
  t.not(upstreams.get('gone', settings), oneOff, 'each such request gets its own')
  // No probe is an absence: checked once a declared upstream with the same settings, beside it, has probed four
  // more times, three intervals at least (the same 0.1 s interval, its timers in this event loop).
  const control = await startBackend(t, 'control')
  upstreams.reconcile(new Map([['kept', probed(control.url)]]))
  const from = probes(control)
  await waitFor(() => probes(control) >= from + 4, { what: 'four probes of the declared upstream beside it' })
  t.equal(probes(a), 0, 'a one-off upstream runs no health checks (nothing would stop them)')
  const guarded = { ...settings, circuit_breaker: { failure_statuses: [503], consecutive_failures: 1, open_seconds: 1, max_open_seconds: 1, half_open_requests: 1 }, outlier_ejection: { interval_seconds: 1, min_requests: 1, above_siblings_percent: 50, failure_statuses: [503], eject_seconds: 1, max_ejected_percent: 50 } }
  const guardedOneOff = upstreams.get('gone', guarded)
  t.same([guardedOneOff.targets[0]?.breaker, guardedOneOff.outliers], [undefined, undefined], 'nor a breaker or an outlier timer (nothing would stop it)')
})

t.test('a single-use upstream relays a GET and a streamed POST whole, then closes its connection', async (t) => {
  const a = await startBackend(t, 'a')
  a.server.keepAliveTimeout = 60_000
  a.handle((req, res, body) => { res.writeHead(200, { 'content-type': 'text/plain' }); res.end(`${req.method ?? ''} ${body}`) })
  for (const method of ['GET', 'POST']) {
    const upstream = new SingleUseUpstream(testSettings([a.url]))
    t.teardown(() => upstream.close())
    const front = await startRelay(t, upstream)
    const res = await fetch(`${front}/x`, method === 'POST' ? { method, body: 'x'.repeat(100_000) } : { method })
    t.equal(await res.text(), method === 'POST' ? `POST ${'x'.repeat(100_000)}` : 'GET ', method)
    await waitFor(() => a.openConnections() === 0, { what: 'a.openConnections() === 0' })
    t.pass(`${method}: the lane-side connection closed after the answer`)
  }
})

t.test('lanes (`build: on_first_use`): declared keys are built at first use, kept ones keep their pool, removed ones drain and close', async (t) => {
  const a = await startBackend(t, 'a')
  const b = await startBackend(t, 'b')
  a.server.keepAliveTimeout = 60_000
  b.server.keepAliveTimeout = 60_000
  a.handle((req, res) => { setTimeout(() => res.end('a'), req.url === '/slow' ? 300 : 0) })
  const upstreams = registry(t, 'on_first_use')
  const settingsA = testSettings([a.url])
  const settingsB = testSettings([b.url])
  upstreams.reconcile(new Map([['store_a', settingsA], ['store_b', settingsB]]))
  t.same(upstreams.keys(), [], 'nothing is built before a request')
  const laneB = upstreams.get('store_b', settingsB)
  t.equal((await callUpstream(upstreams.get('store_a', settingsA), GET)).body, 'a')
  t.equal((await callUpstream(laneB, GET)).body, 'b')
  t.same(upstreams.keys().sort(), ['store_a', 'store_b'])
  t.equal(b.openConnections(), 1)

  const inFlight = callUpstream(upstreams.get('store_a', settingsA), { ...GET, path: '/slow' })
  await waitFor(() => a.seen.length === 2, { what: 'a.seen.length === 2' })
  // The next snapshot: store_a removed, store_b's lane unchanged (a new, equal config object).
  upstreams.reconcile(new Map([['store_b', testSettings([b.url])]]))
  t.same(upstreams.keys(), ['store_b'])
  t.equal((await inFlight).body, 'a', 'the request in flight to the removed lane finished')
  await waitFor(() => a.openConnections() === 0, { what: 'a.openConnections() === 0' })
  t.pass('the removed lane\'s pool closed its connections')
  t.equal(upstreams.get('store_b', settingsB), laneB, 'the kept lane is the same upstream')
  t.equal(b.openConnections(), 1, 'and kept its keep-alive socket')
  t.equal((await callUpstream(laneB, GET)).body, 'b')
  t.equal(b.openConnections(), 1, 'which the next call reuses')

  const late = upstreams.get('store_a', settingsA)
  t.ok(late instanceof SingleUseUpstream, 'a late call for the removed store gets a single-use upstream')
  t.equal((await callUpstream(late, GET)).body, 'a')
  await waitFor(() => a.openConnections() === 0, { what: 'a.openConnections() === 0' })
  t.same(upstreams.keys(), ['store_b'], 'the removed store is not brought back')
})

t.test('a retired upstream\'s request in flight finishes; a shutdown meanwhile still closes everything', async (t) => {
  const a = await startBackend(t, 'a')
  a.handle((req, res) => { setTimeout(() => res.end('slow'), req.url === '/slow' ? 300 : 0) })
  const upstreams = registry(t)
  const settings = testSettings([a.url])
  upstreams.reconcile(new Map([['p', settings]]))
  const inFlight = callUpstream(upstreams.get('p', settings), { ...GET, path: '/slow' })
  await waitFor(() => a.seen.length === 1, { what: 'a.seen.length === 1' })
  upstreams.reconcile(new Map())
  t.equal((await inFlight).body, 'slow')
  await waitFor(() => a.openConnections() === 0, { what: 'a.openConnections() === 0' })

  const again = testSettings([a.url])
  upstreams.reconcile(new Map([['q', again]]))
  const cut = callUpstream(upstreams.get('q', again), { ...GET, path: '/slow' }).then(() => 'answered', () => 'cut')
  await waitFor(() => a.seen.length === 2, { what: 'a.seen.length === 2' })
  upstreams.reconcile(new Map())
  await upstreams.close()
  t.equal(await cut, 'cut', 'close destroys a draining upstream\'s connections')
})

t.test('a request from an older snapshot does not reconcile a declared upstream back to its settings', async (t) => {
  const a = await startBackend(t, 'a')
  const b = await startBackend(t, 'b')
  const upstreams = registry(t, 'on_first_use')
  const before = testSettings([a.url])
  const after = testSettings([b.url])
  upstreams.reconcile(new Map([['lane', before]]))
  const first = upstreams.get('lane', before)
  upstreams.reconcile(new Map([['lane', after]]))
  t.same(first.targets.map((target) => target.url), [b.url], 'the reload moved the upstream to the new target')
  // A request whose chain started before the reload still carries the old settings object.
  const late = upstreams.get('lane', before)
  t.equal(late, first, 'the same upstream')
  t.same(late.targets.map((target) => target.url), [b.url], 'still on the new target: the old settings were not applied again')
  const declaredFirst = registry(t, 'on_first_use')
  declaredFirst.reconcile(new Map([['lane', after]]))
  t.same(declaredFirst.get('lane', before).targets.map((target) => target.url), [b.url], 'built at first use from the declared (newest) settings')
})
