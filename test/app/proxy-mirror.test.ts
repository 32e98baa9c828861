import { once } from 'node:events'
import { request, type IncomingMessage, type ServerResponse } from 'node:http'
import t from 'tap'
import { splitGateway } from '../helpers/split-gateway.js'
import { waitFor } from '../helpers/wait-for.js'

/**
 * `mirror:` copies a share of a proxy block's requests to another target group (real backends): its answer is
 * discarded, and its slowness or failure never delays or changes the caller's answer; the in-flight bound and the
 * body bound drop copies and count them.
 */
async function mirrorGateway (t: { teardown (fn: () => unknown): void }, mirror: Record<string, unknown>) {
  const split = await splitGateway(t)
  const fixture = split.fixture
    .set('services.pricing.split.weights', { legacy: 1 })
    .set('services.pricing.mirror', { upstream: 'next', ...mirror })
    .set('services.pricing.routes.write_price', { methods: ['PUT'], path: '/prices/:sku' })
  const gw = await fixture.boot(t)
  const token = await split.token('till-1')
  const call = async (method: 'GET' | 'PUT' = 'GET', payload?: string) => {
    const res = await gw.app.inject({ method, url: '/legacy/pricing/prices/7', headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain' }, payload })
    return { status: res.statusCode, body: res.body }
  }
  const count = async (result: string): Promise<number> => {
    const line = (await gw.metrics!.registry.metrics()).split('\n').find((l) => l.startsWith(`lanegate_upstream_mirror_requests_total{service="pricing",result="${result}"}`))
    return Number(line?.split(' ').at(-1) ?? 0)
  }
  return { ...split, gw, call, count }
}

t.test('a mirror that holds its answer does not delay the caller, gets the whole body, and its answer is discarded', async (t) => {
  const m = await mirrorGateway(t, { percent: 100 })
  const events: string[] = []
  let answerMirror: (() => void) | undefined
  m.next.handle((_req, res: ServerResponse) => {
    events.push('mirror received')
    // Held until the caller has its answer. A gateway waiting on the copy would answer the caller only after giving
    // up on it (response_ms), closing this connection first: that close is an event the assertion below sees.
    res.on('close', () => { if (!res.writableEnded) events.push('mirror closed unanswered') })
    answerMirror = (): void => { res.writeHead(500).end('mirror'); events.push('mirror answered') }
  })
  const res = await m.call('PUT', '{"price":"2.49"}')
  events.push('caller answered')
  t.same(res, { status: 200, body: 'legacy' })
  await waitFor(() => answerMirror, { what: 'the copy at the mirror' })
  answerMirror!()
  t.same(events.filter((e) => e !== 'mirror received'), ['caller answered', 'mirror answered'], 'the caller had its answer before the mirror gave one')
  t.ok(events.includes('mirror received'))
  t.same(m.next.seen.map((r) => ({ method: r.method, url: r.url, body: r.body, mirror: r.headers['x-lanegate-mirror'], auth: r.headers.authorization })),
    [{ method: 'PUT', url: '/prices/7', body: '{"price":"2.49"}', mirror: '1', auth: undefined }])
  t.same(m.legacy.seen.map((r) => r.body), ['{"price":"2.49"}'], 'the caller\'s relay got the whole body too')
  t.equal(await m.count('sent'), 1)
})

t.test('a failing mirror is invisible to the caller', async (t) => {
  const m = await mirrorGateway(t, { percent: 100 })
  m.next.handle((req) => { req.socket.destroy() })
  for (let i = 0; i < 5; i++) t.same(await m.call(), { status: 200, body: 'legacy' })
  await waitFor(() => m.next.seen.length === 5, { what: 'five copies' })
  t.equal(await m.count('sent'), 5)
})

t.test('percent: 30 of 400 requests copied within binomial bounds', async (t) => {
  const m = await mirrorGateway(t, { percent: 30 })
  for (let i = 0; i < 400; i++) t.same(await m.call(), { status: 200, body: 'legacy' })
  const sent = await m.count('sent')
  await waitFor(() => m.next.seen.length === sent, { what: 'every copy sent to arrive' })
  // 400 × 0.3 = 120, σ ≈ 9.2: ±4σ.
  t.ok(sent >= 83 && sent <= 157, `copied ${sent} of 400`)
  t.equal(m.legacy.seen.length, 400)
})

t.test('max_in_flight drops and counts the copies beyond it; max_body_bytes drops larger bodies', async (t) => {
  const m = await mirrorGateway(t, { percent: 100, max_in_flight: 2, max_body_bytes: 10 })
  const held: ServerResponse[] = []
  m.next.handle((_req, res) => { held.push(res) })
  for (let i = 0; i < 5; i++) t.same(await m.call(), { status: 200, body: 'legacy' })
  await waitFor(() => held.length === 2, { what: 'two copies held at the mirror' })
  t.equal(await m.count('dropped_in_flight'), 3)
  for (const res of held.splice(0)) res.end('late')
  await waitFor(async () => (await m.call()).status === 200 && held.length >= 1, { what: 'a copy once places are free' })
  held.splice(0).forEach((res) => res.end())

  t.same(await m.call('PUT', 'x'.repeat(11)), { status: 200, body: 'legacy' })
  t.equal(await m.count('dropped_body_too_large'), 1)
  t.same(m.legacy.seen.at(-1)?.body, 'x'.repeat(11))
})

t.test('over a real socket, a chunked body is copied whole under the bound and dropped over it', async (t) => {
  const m = await mirrorGateway(t, { percent: 100, max_body_bytes: 10 })
  await m.gw.app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = m.gw.app.server.address() as { port: number }
  const token = await m.token('till-1')
  const put = async (chunks: string[]) => {
    const req = request({ port, host: '127.0.0.1', method: 'PUT', path: '/legacy/pricing/prices/7', headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain' } })
    for (const chunk of chunks) req.write(chunk)
    req.end()
    const [res] = await once(req, 'response') as [IncomingMessage]
    let body = ''
    for await (const chunk of res) body += String(chunk)
    return { status: res.statusCode, body }
  }
  // No Content-Length: node sends these bodies chunked, so only the copy's reader can find the size.
  t.same(await put(['abc', 'def']), { status: 200, body: 'legacy' })
  await waitFor(() => m.next.seen.length === 1, { what: 'the copy' })
  t.same(m.next.seen.map((r) => [r.body, r.headers['transfer-encoding'], r.headers['content-length']]), [['abcdef', undefined, '6']])
  t.same(await put(['0123456', '789ab', 'cdef']), { status: 200, body: 'legacy' })
  t.equal(await m.count('dropped_body_too_large'), 1)
  t.same(m.legacy.seen.map((r) => r.body), ['abcdef', '0123456789abcdef'])
  t.equal(m.next.seen.length, 1)
})
