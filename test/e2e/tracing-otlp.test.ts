import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { SpanKind } from '@opentelemetry/api'
import t, { type Test } from 'tap'
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.js'
import { gatewayFixture } from '../helpers/gateway-fixture.js'
import type { SpawnedGateway } from '../helpers/spawn-gateway.js'
import { sdkTracer, startTracedBackend, traceHeaders } from '../helpers/traced-backend.js'
import { waitFor } from '../helpers/wait-for.js'
import { startWsBackend } from '../helpers/ws-backend.js'
import { closeOf, nextMessage, openWs } from '../helpers/ws-client.js'

const SERVER = 2
const CLIENT = 3

/** A pricing target whose /health answers but whose every other request has its connection reset: a retry's cause. */
async function startResettingTarget (t: Test): Promise<string> {
  const server: Server = createServer((req, res) => {
    if (req.url === '/health') res.end('ok')
    else req.socket.destroy()
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/** `lanegate start` on the demo config exporting spans to `receiver`, the pricing targets (and any lane) given. */
async function startTracedGateway (t: Test, receiver: OtlpReceiver, targets: { a: string, b: string }, env: Record<string, string> = {}): Promise<SpawnedGateway> {
  const fixture = gatewayFixture().set('telemetry', { traces: { endpoint: receiver.url, sample_ratio: 1 } })
  const started = await fixture.start(t, { env: { PRICING_URL_A: targets.a, PRICING_URL_B: targets.b, ...env } })
  return started.gateway
}

async function tokenFor (base: string, clientId: string, scope: string): Promise<string> {
  const res = await fetch(`${base}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: `${clientId}-secret`, scope }).toString(),
  })
  return ((await res.json()) as { access_token: string }).access_token
}

const ofTrace = (receiver: OtlpReceiver, traceId: string): ReceivedSpan[] => receiver.spans.filter((s) => s.traceId === traceId)

t.test('one trace caller -> gateway SERVER -> gateway CLIENT -> backend SERVER; a retry shows two CLIENT spans; a refusal names its policy; an unrouted 404 gets a SERVER span without a route; no secret in any attribute', async (t) => {
  const receiver = await startOtlpReceiver()
  t.teardown(() => receiver.close())
  const backend = await startTracedBackend('pricing-backend', receiver.url)
  t.teardown(() => backend.close())
  const gateway = await startTracedGateway(t, receiver, { a: backend.url, b: await startResettingTarget(t) })
  const caller = sdkTracer('caller', receiver.url)
  t.teardown(() => caller.shutdown())
  const token = await tokenFor(gateway.base, 'demo-pricing', 'pricing:read pricing:write')

  // Two reads, each its own trace: round robin sends one of them to the resetting target first, then retries.
  const reads: { traceId: string, callerSpanId: string }[] = []
  for (let i = 0; i < 2; i++) {
    const span = caller.tracer.startSpan('GET price', { kind: SpanKind.CLIENT })
    const res = await fetch(`${gateway.base}/legacy/pricing/prices/4${i}?api_key=query-secret-${i}`, { headers: { ...traceHeaders(span), authorization: `Bearer ${token}`, cookie: 'session=cookie-secret' } })
    t.equal(res.status, 200, await res.text())
    span.end()
    reads.push({ traceId: span.spanContext().traceId, callerSpanId: span.spanContext().spanId })
  }
  const refusedSpan = caller.tracer.startSpan('GET price without a token', { kind: SpanKind.CLIENT })
  const refused = await fetch(`${gateway.base}/legacy/pricing/prices/1`, { headers: traceHeaders(refusedSpan) })
  t.equal(refused.status, 401)
  await refused.arrayBuffer()
  refusedSpan.end()
  // A path no route takes: its SERVER span has no route or service, and the gateway goes on serving and exits cleanly.
  const unknown = await fetch(`${gateway.base}/no/such/route`)
  t.same([unknown.status, await unknown.json()], [404, { error: 'Not found.' }])
  const write = await fetch(`${gateway.base}/legacy/pricing/prices/7`, { method: 'PUT', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{"price":"body-secret"}' })
  t.equal(write.status, 200)
  await write.arrayBuffer()

  // Each read: the caller's span, the gateway's SERVER span, its CLIENT span(s), the backend's SERVER span.
  await waitFor(() => reads.every(({ traceId }) => ofTrace(receiver, traceId).filter((s) => s.service === 'pricing-backend').length === 1 &&
    ofTrace(receiver, traceId).some((s) => s.service === 'lanegate' && s.kind === SERVER)), { what: 'both reads\' traces complete at the receiver' })
  let retried = 0
  for (const { traceId, callerSpanId } of reads) {
    const spans = ofTrace(receiver, traceId)
    const server = spans.find((s) => s.service === 'lanegate' && s.kind === SERVER)
    const clients = spans.filter((s) => s.service === 'lanegate' && s.kind === CLIENT)
    const backendSpan = spans.find((s) => s.service === 'pricing-backend')
    t.equal(server?.parentSpanId, callerSpanId, 'the gateway\'s SERVER span is a child of the caller\'s span')
    t.equal(server?.name, 'GET /legacy/pricing/prices/:sku')
    t.match(server?.attributes, {
      'http.request.method': 'GET',
      'http.route': '/legacy/pricing/prices/:sku',
      'url.path': `/legacy/pricing/prices/${traceId === reads[0]?.traceId ? 40 : 41}`,
      'http.response.status_code': 200,
      'lanegate.service': 'pricing',
      'lanegate.route': 'read_price',
      'lanegate.client_id': 'demo-pricing',
      'lanegate.organization_id': 'org_hq_demo',
    })
    t.ok(clients.length >= 1 && clients.every((c) => c.parentSpanId === server?.spanId), 'every CLIENT span is a child of the SERVER span')
    const answered = clients.find((c) => c.attributes['http.response.status_code'] === 200)
    t.equal(backendSpan?.parentSpanId, answered?.spanId, 'the backend\'s span is a child of the CLIENT span that reached it')
    t.match(answered?.attributes, { 'http.request.method': 'GET', 'lanegate.upstream': 'pricing', 'url.full': `${backend.url}/prices/${traceId === reads[0]?.traceId ? 40 : 41}` })
    if (clients.length === 2) {
      retried++
      const failed = clients.find((c) => c !== answered)
      t.match(failed, { attributes: { 'error.type': 'reset' }, status: { code: 2 } }, 'the failed attempt: its failure kind, status error')
      t.equal(answered?.attributes['http.request.resend_count'], 1, 'the retry is marked as a resend')
    }
  }
  t.equal(retried, 1, 'the read sent to the resetting target first shows two CLIENT spans')

  const refusedTrace = refusedSpan.spanContext().traceId
  await waitFor(() => ofTrace(receiver, refusedTrace).some((s) => s.service === 'lanegate'), { what: 'the refused request\'s span' })
  const refusal = ofTrace(receiver, refusedTrace).filter((s) => s.service === 'lanegate')
  t.equal(refusal.length, 1, 'a refused request calls no upstream: its SERVER span alone')
  t.match(refusal[0], { kind: SERVER, parentSpanId: refusedSpan.spanContext().spanId, attributes: { 'http.response.status_code': 401, 'lanegate.refused_by': 'auth', 'error.type': 'unauthenticated' } })
  t.same(refusal[0]?.events, [{ name: 'exception', attributes: { 'exception.type': 'unauthenticated' } }])

  await waitFor(() => receiver.spans.some((s) => s.service === 'lanegate' && s.attributes['lanegate.route'] === 'write_price'), { what: 'the write\'s span' })
  // A trace the gateway started (no traceparent): its SERVER span is the root, with the trace id its call sent.
  const writeServer = receiver.spans.find((s) => s.service === 'lanegate' && s.attributes['lanegate.route'] === 'write_price')
  t.match(writeServer, { kind: SERVER, parentSpanId: '', name: 'PUT /legacy/pricing/prices/:sku' })
  await waitFor(() => ofTrace(receiver, writeServer?.traceId ?? '').length === 3, { what: 'the write\'s CLIENT span and the backend\'s span in its trace' })
  t.match(ofTrace(receiver, writeServer?.traceId ?? '').find((s) => s.kind === CLIENT), { parentSpanId: writeServer?.spanId, attributes: { 'http.request.method': 'PUT' } })
  // The token request: its SERVER span, and the issuance as an INTERNAL span under it.
  const tokenServer = receiver.spans.find((s) => s.service === 'lanegate' && s.name === 'POST /oauth/token')
  t.match(tokenServer, { kind: SERVER, attributes: { 'http.response.status_code': 200, 'lanegate.service': 'oauth', 'lanegate.route': 'token' } })
  t.match(receiver.spans.filter((s) => s.traceId === tokenServer?.traceId && s.name === 'issue token'), [{
    kind: 1,
    parentSpanId: tokenServer?.spanId,
    attributes: { 'lanegate.client_id': 'demo-pricing', 'lanegate.organization_id': 'org_hq_demo', 'lanegate.scopes': 'pricing:read pricing:write', 'lanegate.token_lifetime_s': 3600, 'lanegate.auth_method': 'client_secret_post' },
  }])
  await waitFor(() => receiver.spans.some((s) => s.service === 'lanegate' && s.kind === SERVER && s.attributes['http.response.status_code'] === 404), { what: 'the 404\'s span' })
  const notFound = receiver.spans.find((s) => s.service === 'lanegate' && s.kind === SERVER && s.attributes['http.response.status_code'] === 404)
  t.equal(notFound?.name, 'GET')
  t.equal(notFound?.attributes['lanegate.route'], undefined, 'no route on an unrouted request')
  const gatewayValues = JSON.stringify(receiver.spans.filter((s) => s.service === 'lanegate').map((s) => [s.name, s.attributes, s.events]))
  for (const secret of [token, 'Bearer', 'query-secret', 'api_key', 'cookie-secret', 'body-secret', 'demo-pricing-secret', 'demo-pricing-upstream-token']) {
    t.notOk(gatewayValues.includes(secret), `no attribute of the gateway's spans holds "${secret}"`)
  }
  gateway.child.kill('SIGTERM')
  t.equal(await gateway.exited, 0)
})

t.test('fan-out: a CLIENT span per delivery attempt under the commit request, the lane its child; a relayed WebSocket: a SERVER span from upgrade to close with its close code, a CLIENT span for the upstream handshake', async (t) => {
  const receiver = await startOtlpReceiver()
  t.teardown(() => receiver.close())
  const lane = await startTracedBackend('lane-001', receiver.url)
  t.teardown(() => lane.close())
  const wsLane = await startWsBackend(t)
  const gateway = await startTracedGateway(t, receiver, { a: lane.url, b: wsLane.url }, { LANE_001_URL: lane.url, LANE_002_URL: wsLane.url })
  const caller = sdkTracer('caller', receiver.url)
  t.teardown(() => caller.shutdown())
  const token = await tokenFor(gateway.base, 'demo-exchange', 'exchange:fanout.preview exchange:fanout.commit exchange:live.read')

  const previewed = await fetch(`${gateway.base}/v1/fanout/preview`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ operation_type: 'price-change', payload: { product_code: '4011', retail_price: '1.99' }, store_org_ids: ['org_store_001'] }),
  })
  const dispatchId = ((await previewed.json()) as { dispatch_id: string }).dispatch_id
  t.equal(previewed.status, 200)
  const commitSpan = caller.tracer.startSpan('commit', { kind: SpanKind.CLIENT })
  const committed = await fetch(`${gateway.base}/v1/fanout/dispatches/${dispatchId}/commit`, { method: 'POST', headers: { ...traceHeaders(commitSpan), authorization: `Bearer ${token}` } })
  t.equal(committed.status, 200, await committed.text())
  commitSpan.end()
  const commitTrace = commitSpan.spanContext().traceId
  await waitFor(() => ofTrace(receiver, commitTrace).some((s) => s.service === 'lane-001') && ofTrace(receiver, commitTrace).some((s) => s.service === 'lanegate' && s.kind === SERVER),
    { what: 'the commit\'s SERVER span and the lane\'s span of the delivery' })
  const spans = ofTrace(receiver, commitTrace)
  const server = spans.find((s) => s.service === 'lanegate' && s.kind === SERVER)
  const deliveries = spans.filter((s) => s.service === 'lanegate' && s.kind === CLIENT)
  t.match(server, { name: 'POST /v1/fanout/dispatches/:dispatch_id/commit', parentSpanId: commitSpan.spanContext().spanId })
  t.equal(deliveries.length, 1, 'one delivery attempt, one CLIENT span')
  t.match(deliveries[0], { parentSpanId: server?.spanId, attributes: { 'http.request.method': 'POST', 'lanegate.upstream': 'org_store_001', 'url.full': `${lane.url}/fanout/price-change/apply`, 'http.response.status_code': 200 } })
  t.equal(spans.find((s) => s.service === 'lane-001')?.parentSpanId, deliveries[0]?.spanId, 'the lane\'s span is a child of the delivery attempt (the traceparent it was sent)')

  const wsSpan = caller.tracer.startSpan('live feed', { kind: SpanKind.CLIENT })
  const opened = await openWs(`${gateway.base.replace('http:', 'ws:')}/v1/stores/org_store_002/live/feed`, { headers: { ...traceHeaders(wsSpan), authorization: `Bearer ${token}` } })
  if (!opened.open) throw new Error(`not upgraded: ${opened.status} ${opened.body}`)
  opened.ws.send('hello')
  t.same(await nextMessage(opened.ws), { data: Buffer.from('hello'), binary: false })
  const closed = closeOf(opened.ws)
  opened.ws.close(1000)
  t.equal((await closed).code, 1000)
  wsSpan.end()
  const wsTrace = wsSpan.spanContext().traceId
  await waitFor(() => ofTrace(receiver, wsTrace).some((s) => s.service === 'lanegate' && s.kind === SERVER), { what: 'the WebSocket session\'s span' })
  const wsSpans = ofTrace(receiver, wsTrace).filter((s) => s.service === 'lanegate')
  const session = wsSpans.find((s) => s.kind === SERVER)
  t.match(session, {
    name: 'GET /v1/stores/:store_org_id/live/*',
    parentSpanId: wsSpan.spanContext().spanId,
    attributes: { 'http.response.status_code': 101, 'lanegate.service': 'live', 'lanegate.route': 'read', 'lanegate.websocket.close_code': 1000 },
  })
  const upgrades = wsSpans.filter((s) => s.kind === CLIENT)
  t.equal(upgrades.length, 1, 'one CLIENT span: the upstream handshake')
  t.match(upgrades[0], { parentSpanId: session?.spanId, attributes: { 'http.request.method': 'GET', 'lanegate.upstream': 'org_store_002', 'url.full': `${wsLane.url}/feed`, 'http.response.status_code': 101 } })
  const handshake = wsLane.handshakes.at(-1)
  t.match(handshake?.headers.traceparent, new RegExp(`^00-${wsTrace}-${upgrades[0]?.spanId ?? 'none'}-`), 'the lane\'s handshake has the CLIENT span as its parent')
  gateway.child.kill('SIGTERM')
  t.equal(await gateway.exited, 0)
})
