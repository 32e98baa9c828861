import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import { WebSocket, WebSocketServer } from 'ws'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { buildTestApp } from '../helpers/build-app.js'
import { gatewayFixture } from '../helpers/gateway-fixture.js'
import { histogramCount } from '../helpers/prometheus.js'
import { waitFor } from '../helpers/wait-for.js'
import { startWsBackend } from '../helpers/ws-backend.js'
import { closeOf, nextMessage, openWs } from '../helpers/ws-client.js'

interface Teardown { teardown (fn: () => unknown): void }

/** A gateway in this process, listening, with one WebSocket route (`/events/*` to `target`) and an access log file in `dir`. */
async function eventsGateway (t: Teardown, target: string) {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-access-ws-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const fixture = gatewayFixture('minimal')
    .set('access_log', { fields: ['method', 'route', 'status'], sinks: [{ type: 'file', path: join(dir, 'access.log') }] })
    .set('services', {
      events: { type: 'proxy', prefix: '/events', envelope: 'plain', upstream: { targets: [target] }, websocket: { idle_timeout_seconds: 120 }, routes: { stream: { methods: ['GET'], path: '/*', websocket: true } } },
    })
  const written = await fixture.write()
  t.teardown(() => written.remove())
  const gw = await buildTestApp({ file: written.file, logLevel: 'info' })
  t.teardown(() => gw.close())
  await gw.app.listen({ port: 0, host: '127.0.0.1' })
  const metrics = gw.metrics
  if (metrics === undefined) throw new Error('the fixture has an admin block: metrics are on')
  return { gw, metrics, dir }
}

t.test('a relayed WebSocket that ends is completed once as a 101: counted, timed as a stream, logged and access-logged', async (t) => {
  const backend = await startWsBackend(t)
  const { gw, metrics, dir } = await eventsGateway(t, backend.url)

  const opened = await openWs(`ws://127.0.0.1:${(gw.app.server.address() as AddressInfo).port}/events/feed`)
  if (!opened.open) throw new Error(`not upgraded: ${opened.status} ${opened.body}`)
  const echoed = nextMessage(opened.ws)
  opened.ws.send('hello')
  t.equal((await echoed).data.toString(), 'hello')
  const closing = closeOf(opened.ws)
  opened.ws.close(1000)
  await closing
  const line = await waitFor(async () => (await readFile(join(dir, 'access.log'), 'utf8').catch(() => '')) || undefined, { what: 'the session\'s access line' })
  t.same(line.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as unknown), [{ method: 'GET', route: 'stream', status: 101 }])

  const text = await metrics.registry.metrics()
  const answered = text.split('\n').filter((l) => l.startsWith('lanegate_http_requests_total{service="events"'))
  t.same(answered, ['lanegate_http_requests_total{service="events",route="stream",method="GET",status="101"} 1'])
  t.same([
    histogramCount(text, 'lanegate_http_stream_duration_seconds', { service: 'events', route: 'stream' }),
    histogramCount(text, 'lanegate_http_request_duration_seconds', { service: 'events', route: 'stream' }),
  ], [1, 0], 'timed as a stream, not as request latency')
  const completed = gw.logs.map((l) => JSON.parse(l) as { msg?: string, res?: { statusCode?: number }, req?: { url?: string } })
    .filter((l) => l.msg === 'request completed' && l.req?.url === '/events/feed')
  t.same(completed.map((l) => l.res?.statusCode), [101], 'one request completed line')
})

t.test('a caller that leaves while the upstream answers its upgrade: the upstream dropped, the request still completed once (as a 101 session that ended abnormally), never counted as an open WebSocket', async (t) => {
  // A real `ws` server that accepts the upgrade only when told (verifyClient), so the caller can leave first.
  const pending: Array<(accept: boolean) => void> = []
  const upstream = new WebSocketServer({ port: 0, host: '127.0.0.1', verifyClient: (_info, accept) => { pending.push(accept) } })
  await once(upstream, 'listening')
  t.teardown(() => new Promise((resolve) => upstream.close(resolve)))
  const upstreamClosed = new Promise<void>((resolve) => upstream.once('connection', (socket) => socket.once('close', () => resolve())))
  const { gw, metrics, dir } = await eventsGateway(t, `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`)

  const caller = new WebSocket(`ws://127.0.0.1:${(gw.app.server.address() as AddressInfo).port}/events/feed`)
  caller.on('error', () => {})
  await waitFor(() => pending.length === 1, { what: 'the upstream handshake' })
  const callerClosed = new Promise((resolve) => caller.once('close', resolve))
  caller.terminate()
  await callerClosed
  ;(pending[0] as (accept: boolean) => void)(true)
  await upstreamClosed

  const line = await waitFor(async () => (await readFile(join(dir, 'access.log'), 'utf8').catch(() => '')) || undefined, { what: 'the abandoned session\'s access line' })
  t.same(line.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as unknown), [{ method: 'GET', route: 'stream', status: 101 }])
  const text = await metrics.registry.metrics()
  t.same(text.split('\n').filter((l) => l.startsWith('lanegate_http_requests_total{service="events"')), ['lanegate_http_requests_total{service="events",route="stream",method="GET",status="101"} 1'])
  t.same(text.split('\n').filter((l) => /^lanegate_websocket_(closes_total|connections)\{/.test(l) && !l.endsWith(' 0')), [], 'never an open WebSocket, never a close of one')
  const completed = gw.logs.map((l) => JSON.parse(l) as { msg?: string, res?: { statusCode?: number }, req?: { url?: string } })
    .filter((l) => l.msg === 'request completed' && l.req?.url === '/events/feed')
  t.same(completed.map((l) => l.res?.statusCode), [101], 'one request completed line')
})
