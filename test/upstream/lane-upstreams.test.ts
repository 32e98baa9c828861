import t from 'tap'
import type { LaneConfig } from '../../src/config/types.js'
import { callLane } from '../../src/services/fanout/lane-client.js'
import { createSharedUpstreams } from '../../src/upstream/registry.js'
import { deadPort, startBackend, startRelay } from '../helpers/upstream-servers.js'
import { waitFor } from '../helpers/wait-for.js'

function laneOf (baseUrl: string, overrides: Partial<LaneConfig> = {}): LaneConfig {
  return { base_url: baseUrl, connect_timeout_ms: 1000, response_timeout_ms: 2000, max_sockets: 1, ...overrides }
}

t.test('the live relay and fan-out share one pool per lane: fan-out waits for the lane\'s one socket', async (t) => {
  const lane = await startBackend(t, 'lane')
  const held: Array<() => void> = []
  lane.handle((req, res) => {
    if (req.url === '/live/slow') held.push(() => res.end('slow done'))
    else res.end('{"ok":true}')
  })
  const upstreams = createSharedUpstreams()
  t.teardown(() => upstreams.close())
  const config = laneOf(`${lane.url}/`)
  const live = upstreams.lanes.get('org_a', config)
  const relay = await startRelay(t, live)

  const slow = fetch(`${relay}/live/slow`)
  await waitFor(() => held.length > 0, { what: 'the relayed request to reach the lane' })
  t.equal(upstreams.lanes.get('org_a', config), live, 'fan-out gets the same upstream for the same store')
  const fanout = callLane(upstreams.lanes.get('org_a', config), '/fanout/apply', { x: 1 }, { timeoutMs: 2000 })
  // "Queued, not sent": the lane's pool holds it in its queue, where a second socket, if there were one, would take it.
  const stats = live.targets[0]?.pool.stats
  await waitFor(() => (stats?.pending ?? 0) + (stats?.queued ?? 0) >= 1, { what: 'the fan-out call to wait in the lane\'s pool' })
  t.equal(stats?.connected, 1, 'on one socket')
  t.same(lane.seen.map((r) => r.url), ['/live/slow'], 'the fan-out call queues behind the relayed request (max_sockets 1)')
  for (const release of held) release()
  const res = await slow
  t.same([res.status, await res.text()], [200, 'slow done'])
  t.same(await fanout, { ok: true, status: 200, body: { ok: true } })
  t.same(lane.seen.map((r) => r.url), ['/live/slow', '/fanout/apply'])
})

t.test('a reload with an equal lane keeps its pool; a moved lane gets a new one and the old drains', async (t) => {
  const a = await startBackend(t, 'a')
  const b = await startBackend(t, 'b')
  const upstreams = createSharedUpstreams()
  t.teardown(() => upstreams.close())
  const first = upstreams.lanes.get('org_a', laneOf(a.url))
  const target = first.targets[0]
  t.equal(upstreams.lanes.get('org_a', laneOf(a.url)).targets[0], target, 'an equal lane from a new snapshot keeps the pool')
  const moved = upstreams.lanes.get('org_a', laneOf(b.url))
  t.equal(moved, first, 'one upstream per store')
  t.not(moved.targets[0], target)
  t.equal(target?.pool.closed, true, 'the old pool closes once drained')
  t.same(await callLane(moved, '/x', {}, { timeoutMs: 1000 }), { ok: true, status: 200, body: 'b' })
})

t.test('a lane answering 4xx to fan-out keeps a bounded body; an unreachable one reports why', async (t) => {
  const a = await startBackend(t, 'a')
  a.handle((_req, res) => { res.writeHead(422).end('y'.repeat(5000)) })
  const upstreams = createSharedUpstreams()
  t.teardown(() => upstreams.close())
  const refused = await callLane(upstreams.lanes.get('org_dead', laneOf(`http://127.0.0.1:${await deadPort()}`)), '/x', {}, { timeoutMs: 1000 })
  t.same(refused, {
    ok: false,
    retryable: true,
    failure: { error: 'upstream_error', upstream_status: 0, upstream_failure: 'refused', message: 'The lane software could not be reached.', upstream_body: '' },
  })
  const rejected = await callLane(upstreams.lanes.get('org_a', laneOf(a.url)), '/x', {}, { timeoutMs: 1000 })
  t.same(rejected, {
    ok: false,
    retryable: false,
    failure: { error: 'upstream_error', upstream_status: 422, message: 'The lane answered 422.', upstream_body: `${'y'.repeat(2048)} [truncated]` },
  })
})
