import t from 'tap'
import { splitBucket } from '../../src/upstream/split.js'
import { buildTestApp, getToken } from '../helpers/build-app.js'
import { gatewayFixture } from '../helpers/gateway-fixture.js'
import { startBackend } from '../helpers/upstream-servers.js'

/**
 * A store moves to a new version of its lane software by config: `lane.next` beside its `lane`, and
 * `services.live.split` choosing between the groups `lane` and `next` per store (real lanes on port 0, answering
 * their own name).
 */
/** The demo's org_store_001 and org_store_002 (organizations[0].stores[0] and [1]). */
const STORES = [[0, 0], [0, 1]] as const

t.test('a store rule moves one store to lane.next; the other stays on its lane; a reload moves it back', async (t) => {
  const v1 = await startBackend(t, 'v1')
  const v2 = await startBackend(t, 'v2')
  let fixture = gatewayFixture()
  for (const [org, store] of STORES) {
    fixture = fixture.set(['organizations', org, 'stores', store, 'lane'], { base_url: v1.url, next: { base_url: v2.url } })
  }
  fixture = fixture.set('services.live.split', { rules: [{ match: { stores: ['org_store_002'] }, upstream: 'next' }] })
  const file = await fixture.write()
  t.teardown(() => file.remove())
  const gw = await buildTestApp({ file: file.file })
  t.teardown(() => gw.close())
  const token = await getToken(gw.app, 'demo-exchange')
  const read = async (store: string) => {
    const res = await gw.app.inject({ url: `/v1/stores/${store}/live/items`, headers: { authorization: `Bearer ${token}` } })
    return { status: res.statusCode, body: res.body }
  }
  t.same(await read('org_store_001'), { status: 200, body: 'v1' })
  t.same(await read('org_store_002'), { status: 200, body: 'v2' })
  t.same(v2.seen.map((r) => r.url), ['/items'])
  const metrics = await gw.metrics!.registry.metrics()
  t.match(metrics, 'lanegate_upstream_group_requests_total{service="live",group="next"} 1\n')
  t.match(metrics, 'lanegate_upstream_requests_total{upstream="org_store_002/next",outcome="ok"} 1\n')

  await file.write(fixture.set('services.live.split', { weights: { lane: 1, next: 0 } }))
  t.match(await gw.gateway.reload(), { outcome: 'applied' })
  t.same(await read('org_store_002'), { status: 200, body: 'v1' }, 'weights: all to lane')
})

t.test('weights by store: every request of a store goes to the same version; unknown groups are config errors', async (t) => {
  const v1 = await startBackend(t, 'v1')
  const v2 = await startBackend(t, 'v2')
  let fixture = gatewayFixture()
  for (const [org, store] of STORES) {
    fixture = fixture.set(['organizations', org, 'stores', store, 'lane'], { base_url: v1.url, next: { base_url: v2.url } })
  }
  const gw = await fixture.set('services.live.split', { weights: { lane: 50, next: 50 } }).boot(t)
  const token = await getToken(gw.app, 'demo-exchange')
  for (const store of ['org_store_001', 'org_store_002']) {
    const bodies = new Set<string>()
    for (let i = 0; i < 10; i++) bodies.add((await gw.app.inject({ url: `/v1/stores/${store}/live/x`, headers: { authorization: `Bearer ${token}` } })).body)
    t.same([...bodies], [splitBucket('live', store) < 5000 ? 'v1' : 'v2'], `${store}: the version its bucket gives, on every request`)
  }
  const bad = await fixture.set('services.live.split', { weights: { lane: 1, beta: 1 } }).boot(t).then(() => undefined, (e: unknown) => e as { problems: unknown[] })
  t.match(bad?.problems, [{ path: 'services.live.split.weights.beta', message: 'no upstream group "beta" (groups: lane, next)' }])
})
