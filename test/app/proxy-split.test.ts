import t from 'tap'
import { buildTestApp } from '../helpers/build-app.js'
import { splitGateway } from '../helpers/split-gateway.js'

/**
 * A proxy block's traffic split between two target groups (real backends): 2,000 distinct clients at 90/10, each
 * staying in its group; header and store rules before the weights; a reload moving the weights to 80/20 keeps
 * every client of `next` there and moves only the border's buckets of `legacy`.
 */
const CLIENTS = 2000

t.test('2,000 clients at 90/10 land 10 % ± 2 % in next, each on every request; a reload to 80/20 keeps next and moves ~1/9 of legacy', async (t) => {
  const split = await splitGateway(t)
  const file = await split.fixture.write()
  t.teardown(() => file.remove())
  const gw = await buildTestApp({ file: file.file })
  t.teardown(() => gw.close())
  const tokens = await Promise.all(Array.from({ length: CLIENTS }, (_, i) => split.token(`till-${i}`)))
  const groupsOf = async (): Promise<string[]> => {
    const groups: string[] = []
    for (const token of tokens) {
      const res = await gw.app.inject({ url: '/legacy/pricing/prices/1', headers: { authorization: `Bearer ${token}` } })
      if (res.statusCode !== 200) throw new Error(`${res.statusCode} ${res.body}`)
      groups.push(res.body)
    }
    return groups
  }

  const first = await groupsOf()
  const inNext = first.filter((g) => g === 'next').length
  t.ok(inNext >= CLIENTS * 0.08 && inNext <= CLIENTS * 0.12, `next: ${inNext} of ${CLIENTS}`)
  t.same(first.filter((g) => g !== 'next' && g !== 'legacy'), [], 'every answer is a whole body of one backend')
  t.same(await groupsOf(), first, 'every client lands where it did')
  t.equal(split.legacy.seen.length + split.next.seen.length, 2 * CLIENTS)

  const metrics = await gw.metrics!.registry.metrics()
  t.match(metrics, `lanegate_upstream_group_requests_total{service="pricing",group="next"} ${2 * inNext}\n`)
  t.match(metrics, `lanegate_upstream_group_requests_total{service="pricing",group="legacy"} ${2 * (CLIENTS - inNext)}\n`)
  t.match(metrics, 'lanegate_upstream_requests_total{upstream="pricing/next",outcome="ok"}')

  await file.write(split.fixture.set('services.pricing.split.weights', { legacy: 80, next: 20 }))
  t.match(await gw.gateway.reload(), { outcome: 'applied' })
  const after = await groupsOf()
  const stayed = first.every((g, i) => g !== 'next' || after[i] === 'next')
  t.ok(stayed, 'every client of next is still in next')
  const moved = first.filter((g, i) => g === 'legacy' && after[i] === 'next').length
  const legacyBefore = CLIENTS - inNext
  // 1,000 of legacy's 9,000 buckets moved: 1/9 of its clients, within binomial noise.
  t.ok(moved >= legacyBefore * 0.08 && moved <= legacyBefore * 0.145, `moved: ${moved} of ${legacyBefore}`)
})

t.test('a header rule and a route\'s store rule win over the weights; a route split of its own', async (t) => {
  const split = await splitGateway(t)
  const gw = await split.fixture.boot(t)
  const call = async (url: string, token: string, headers: Record<string, string> = {}) => {
    const res = await gw.app.inject({ url, headers: { authorization: `Bearer ${token}`, ...headers } })
    return { status: res.statusCode, body: res.body }
  }
  // Clients the weights put in legacy (most of them): the header takes them to next.
  const tokens = await Promise.all(Array.from({ length: 20 }, (_, i) => split.token(`pos-${i}`)))
  for (const token of tokens) {
    t.same(await call('/legacy/pricing/prices/1', token, { 'x-pricing-next': '1' }), { status: 200, body: 'next' })
    t.same(await call('/legacy/pricing/prices/1', token, { 'x-pricing-next': '0' }), await call('/legacy/pricing/prices/1', token), 'another value: the weights')
    // The route's own split: its store rule, else all to legacy (the block's header rule is not the route's).
    t.same(await call('/legacy/pricing/stores/org_store_2/prices', token), { status: 200, body: 'next' })
    t.same(await call('/legacy/pricing/stores/org_store_1/prices', token, { 'x-pricing-next': '1' }), { status: 200, body: 'legacy' })
  }
  t.same(split.next.seen.map((r) => r.url).filter((u) => u.startsWith('/stores/')), Array(20).fill('/stores/org_store_2/prices'))
})

t.test('over real sockets: a caller keeps its group across connections, and the split is by client, not by connection', async (t) => {
  const split = await splitGateway(t)
  const gw = await split.fixture.boot(t)
  await gw.app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = gw.app.server.address() as { port: number }
  const tokens = await Promise.all(Array.from({ length: 40 }, (_, i) => split.token(`web-${i}`)))
  const seen = new Map<string, Set<string>>()
  for (let round = 0; round < 3; round++) {
    for (const [i, token] of tokens.entries()) {
      const res = await fetch(`http://127.0.0.1:${port}/legacy/pricing/prices/${round}`, { headers: { authorization: `Bearer ${token}`, connection: 'close' } })
      const body = await res.text()
      t.equal(res.status, 200)
      const groups = seen.get(`web-${i}`) ?? new Set<string>()
      groups.add(body)
      seen.set(`web-${i}`, groups)
    }
  }
  t.same([...seen.values()].filter((groups) => groups.size !== 1), [], 'one group per client')
  const injected = await gw.app.inject({ url: '/legacy/pricing/prices/9', headers: { authorization: `Bearer ${tokens[0]!}` } })
  t.same(injected.body, [...seen.get('web-0')!][0])
})

t.test('each group has its own breaker: next opens on its failures, legacy keeps answering', async (t) => {
  const split = await splitGateway(t)
  const gw = await split.fixture.set('services.pricing.upstreams.next.circuit_breaker', { consecutive_failures: 2, open_seconds: 60 }).boot(t)
  split.next.handle((_req, res) => { res.writeHead(503, { 'content-type': 'text/plain' }).end('down') })
  const token = await split.token('till-1')
  const call = async (headers: Record<string, string> = {}) => {
    const res = await gw.app.inject({ url: '/legacy/pricing/prices/1', headers: { authorization: `Bearer ${token}`, 'x-pricing-next': '0', ...headers } })
    return { status: res.statusCode, body: res.json() as unknown, retryAfter: res.headers['retry-after'] !== undefined }
  }
  const failed = { error: 'upstream_error', upstream_status: 503, upstream_body: 'down', message: 'The upstream service answered 503.' }
  t.same(await call({ 'x-pricing-next': '1' }), { status: 503, body: failed, retryAfter: false })
  t.same(await call({ 'x-pricing-next': '1' }), { status: 503, body: failed, retryAfter: false })
  t.same(await call({ 'x-pricing-next': '1' }), {
    status: 503,
    body: { error: 'upstream_error', upstream_status: 0, upstream_failure: 'circuit_open', upstream_body: '', message: 'The upstream service is failing: its circuit breaker is open.' },
    retryAfter: true,
  })
  t.equal(split.next.seen.length, 2, 'the open breaker sent nothing')
  t.same(await gw.app.inject({ url: '/legacy/pricing/stores/org_store_1/prices', headers: { authorization: `Bearer ${token}` } }).then((r) => [r.statusCode, r.body]), [200, 'legacy'], 'legacy is untouched')
  t.match(await gw.metrics!.registry.metrics(), 'lanegate_upstream_circuit_state{service="pricing/next",target="' + split.next.url + '"} 2')
})
