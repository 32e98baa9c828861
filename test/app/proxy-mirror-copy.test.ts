import t from 'tap'
import { splitGateway } from '../helpers/split-gateway.js'
import { startBackend } from '../helpers/upstream-servers.js'
import { waitFor } from '../helpers/wait-for.js'

/**
 * What a mirrored copy is to its group: sent once (no retry, no share of the retry budget), its answer counted by
 * its head and never read into memory, and nothing of it written back to the caller's own request.
 */
type SplitBackends = Awaited<ReturnType<typeof splitGateway>>

async function copyGateway (t: { teardown (fn: () => unknown): void }, nextSettings: (split: SplitBackends) => Record<string, unknown> = () => ({})) {
  const split = await splitGateway(t)
  const next = nextSettings(split)
  const fixture = split.fixture
    .set('services.pricing.split.weights', { legacy: 1 })
    .set('services.pricing.mirror', { upstream: 'next', percent: 100 })
  for (const [key, value] of Object.entries(next)) fixture.set(`services.pricing.upstreams.next.${key}`, value)
  const gw = await fixture.boot(t)
  const token = await split.token('till-1')
  const call = async () => {
    const res = await gw.app.inject({ method: 'GET', url: '/legacy/pricing/prices/7', headers: { authorization: `Bearer ${token}` } })
    return { status: res.statusCode, body: res.body }
  }
  const metric = async (prefix: string): Promise<number> => {
    const line = (await gw.metrics!.registry.metrics()).split('\n').find((l) => l.startsWith(prefix))
    return Number(line?.split(' ').at(-1) ?? 0)
  }
  return { ...split, gw, call, metric }
}

t.test('a copy whose answer is larger than any body bound is an ok answer of the mirror group, not a failure', async (t) => {
  const m = await copyGateway(t)
  const big = 'x'.repeat(3 * 1024 * 1024)
  m.next.handle((_req, res) => { res.writeHead(200, { 'content-length': String(big.length) }).end(big) })
  t.same(await m.call(), { status: 200, body: 'legacy' })
  await waitFor(async () => await m.metric('lanegate_upstream_requests_total{upstream="pricing/next",outcome="ok"}') === 1, { what: 'the copy\'s answer counted ok' })
  t.equal(await m.metric('lanegate_upstream_requests_total{upstream="pricing/next",outcome="unreachable"}'), 0)
})

t.test('a failing copy is not retried on the group\'s other target, even where the group retries', async (t) => {
  const other = await startBackend(t, 'next-2')
  const m = await copyGateway(t, (split) => ({ targets: [split.next.url, other.url], retry: { attempts: 2, budget: { percent: 100, min_per_second: 10 } } }))
  m.next.handle((req) => { req.socket.destroy() })
  other.handle((req) => { req.socket.destroy() })
  for (let i = 0; i < 4; i++) t.same(await m.call(), { status: 200, body: 'legacy' })
  await waitFor(async () => await m.metric('lanegate_upstream_mirror_requests_total{service="pricing",result="sent"}') === 4, { what: 'four copies sent' })
  await waitFor(async () => await m.metric('lanegate_upstream_requests_total{upstream="pricing/next",outcome="unreachable"}') === 4, { what: 'four copies failed' })
  t.equal(m.next.seen.length + other.seen.length, 4, 'one attempt per copy')
  t.equal(await m.metric('lanegate_upstream_retries_total{upstream="pricing/next"'), 0, 'no retry sent or refused')
})

t.test('a route whose transform makes the request a SOAP call: the copy is the same call (method, path and body as the phase left them)', async (t) => {
  const split = await splitGateway(t)
  const fixture = split.fixture
    .set('services.pricing.split.weights', { legacy: 1 })
    .set('services.pricing.mirror', { upstream: 'next', percent: 100 })
    .set('services.pricing.routes.read_price.policies', [{ transform: { soap: { version: '1.1', namespace: 'urn:prices', operation: 'GetPrice' } } }])
  const envelope = (name: string) => `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><GetPriceResponse xmlns="urn:prices"><Served>${name}</Served></GetPriceResponse></soap:Body></soap:Envelope>`
  for (const [backend, name] of [[split.legacy, 'legacy'], [split.next, 'next']] as const) {
    backend.handle((_req, res) => { res.writeHead(200, { 'content-type': 'text/xml; charset=utf-8' }).end(envelope(name)) })
  }
  const gw = await fixture.boot(t)
  const res = await gw.app.inject({ method: 'GET', url: '/legacy/pricing/prices/7', headers: { authorization: `Bearer ${await split.token('till-1')}` } })
  t.equal(res.statusCode, 200, res.body)
  await waitFor(() => split.next.seen.length === 1, { what: 'the copy at the mirror group' })
  const [sent, copied] = [split.legacy.seen[0], split.next.seen[0]]
  t.match(sent, { method: 'POST', url: '/', headers: { soapaction: /.*/ } }, 'the caller\'s GET went as a SOAP POST')
  t.same([copied?.method, copied?.url, copied?.body], [sent?.method, sent?.url, sent?.body], 'the copy: the same method, path and envelope')
  t.match(copied?.body, /<soap:Body><op:GetPrice xmlns:op="urn:prices">/, 'the envelope the transform wrote')
  t.equal(copied?.headers['x-lanegate-mirror'], '1')
})
