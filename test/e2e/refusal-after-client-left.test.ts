import { once } from 'node:events'
import { connect } from 'node:net'
import Fastify from 'fastify'
import t from 'tap'
import { createErrorHandler } from '../../src/errors/error-handler.js'
import { GatewayError } from '../../src/plugin/gateway-error.js'
import { GatewayMetrics } from '../../src/observability/metrics.js'
import { countRefusal, MeteredLogController } from '../../src/observability/instrument-app.js'
import { waitFor } from '../helpers/wait-for.js'

/** The 429 cells: `lanegate_rate_limited_total` and `lanegate_http_requests_total{status="429"}`, summed. */
function counts (metrics: GatewayMetrics): { limited: number, answered429: number } {
  let limited = 0
  let answered429 = 0
  metrics.rateLimited.each((_labels, cell) => { limited += cell.value })
  metrics.requests.each((labels, cell) => { if (labels.status === '429') answered429 += cell.value })
  return { limited, answered429 }
}

/** One GET on a fresh connection; `leave` destroys the socket once the server has the request (else reads the answer). */
async function get (port: number, path: string, entered?: Promise<void>): Promise<string> {
  const socket = connect(port, '127.0.0.1')
  await once(socket, 'connect')
  socket.write(`GET ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n`)
  if (entered !== undefined) {
    await entered
    socket.destroy()
    return ''
  }
  let text = ''
  socket.setEncoding('utf8').on('data', (chunk: string) => { text += chunk })
  await once(socket, 'close')
  return text
}

t.test('a 429 decided after its client left counts once in both lanegate_rate_limited_total and lanegate_http_requests_total', async (t) => {
  const metrics = new GatewayMetrics({ configVersion: () => 1, dependencies: async () => ({}) })
  // A logger, as the gateway always has: without one fastify reports no answer to the log controller at all.
  const app = Fastify({ logger: { level: 'silent' }, logController: new MeteredLogController(metrics, { disableRequestLogging: true }) })
  app.decorateRequest('gw', null as never)
  app.setErrorHandler(createErrorHandler('plain', function countRefusals (request, error, reply) { countRefusal(metrics, request, error, reply) }))
  let entered: () => void = () => {}
  // A limit that answers after an asynchronous step, as a client-keyed limit does after `auth`: here the step
  // waits for the client to leave, so the refusal is always decided on a closed connection.
  app.get('/limited', async function limitedAfterAsyncStep (request, reply) {
    if (request.query !== null && (request.query as Record<string, string>).leave !== undefined) {
      entered()
      await once(reply.raw, 'close')
    }
    throw new GatewayError('too_many_requests', { limit: 'per-client' })
  })
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => app.close())
  const port = (app.server.address() as { port: number }).port

  t.match(await get(port, '/limited'), /^HTTP\/1\.1 429 /, 'answered while the client waits')
  // fastify reports an answer once the socket accepted all of it, which may come after the client read it.
  await waitFor(() => counts(metrics).answered429 === 1, { what: 'the first 429 counted as answered' })
  t.same(counts(metrics), { limited: 1, answered429: 1 })

  await get(port, '/limited?leave=1', new Promise((resolve) => { entered = resolve }))
  // A third request, answered, runs after whatever the abandoned one left queued (a late requestCompleted).
  t.match(await get(port, '/limited'), /^HTTP\/1\.1 429 /)
  await waitFor(() => counts(metrics).limited === 3, { what: 'the third refusal counted' })
  await waitFor(() => counts(metrics).answered429 >= 3, { what: 'three 429s counted as answered', timeoutMs: 10_000 })
  t.same(counts(metrics), { limited: 3, answered429: 3 }, 'the refusal to the client that left counts once in each')
})
