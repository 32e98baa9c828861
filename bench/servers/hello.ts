import { parseArgs } from 'node:util'
import fastify, { LogController, type FastifyBaseLogger } from 'fastify'
import { pino } from 'pino'
import { deferredRequestLogging } from '../../src/logging/request-logger.js'
import { requestIdGenerator } from '../../src/logging/request-id.js'

/**
 * Baseline: bare fastify hello-world, what the in-process scenarios are compared with. `GET /` answers a small
 * JSON object; `POST /` parses a form body and answers the same (baseline for token issuance).
 */
const { values } = parseArgs({ options: { port: { type: 'string' }, 'as-gateway': { type: 'boolean', default: false } } })
// `--as-gateway`: the fastify options every production gateway needs, as lanegate sets them (app.ts), and nothing
// of lanegate's own: a pino logger at `warn` with the deferred per-request child, request logging off, and its
// request ids. Set beside the bare server it tells what fastify charges for them from what lanegate's hooks,
// chain and handler cost (auth-get's comparisons, bench/instruction-figures.ts).
const requestLogging = values['as-gateway'] === true ? deferredRequestLogging(requestIdGenerator()) : undefined
const app = requestLogging !== undefined
  ? fastify({
    loggerInstance: pino({ level: 'warn' }) as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    requestIdHeader: false,
    genReqId: requestLogging.genReqId,
  })
  : fastify({ logger: false })
requestLogging?.install(app.log)
app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, function parseForm (_request, body, done) {
  done(null, Object.fromEntries(new URLSearchParams(body as string)))
})
app.get('/', async function hello () {
  return { hello: 'world' }
})
// The like-for-like reference of auth-get: the same status, headers and body the gateway's content route answers
// (a copy of the demo content page), with no auth, limits or routing work, so a report can tell what the
// gateway's own work costs from what a bigger response costs.
const contentPage = JSON.stringify({
  data: [
    { id: 'demo-promo-001', type: 'promotion', title: 'Store 001 weekend promotion', body: 'Coffee beans 20% off at store 001 this weekend.', organization_id: 'org_store_001', published_at: '2026-11-05T09:00:00Z' },
    { id: 'demo-welcome', type: 'article', title: 'Welcome to the demo HQ', body: 'This item is visible to every caller of org_hq_demo\'s tree.', organization_id: 'org_hq_demo', published_at: '2026-11-01T09:00:00Z' },
  ],
  meta: { page: 1, per_page: 20, total: 2, total_pages: 1 },
})
app.get('/content', async function sameResponse (request, reply) {
  return reply
    .header('x-request-id', request.id)
    .header('cache-control', 'private, no-cache')
    .header('x-ratelimit-limit', '1000000000')
    .header('x-ratelimit-remaining', '999999999')
    .header('etag', '"a4d0uNrRbU5Ckslj4iXY4GQoH9mB_60T"')
    .header('vary', 'Authorization')
    .type('application/json; charset=utf-8')
    .send(contentPage)
})
app.post('/', async function helloPost () {
  return { hello: 'world' }
})
await app.listen({ port: Number(values.port), host: '127.0.0.1' })
process.on('SIGTERM', () => { void app.close().then(() => process.exit(0)) })
