import { parseArgs } from 'node:util'
import fastify from 'fastify'

/**
 * Baseline: bare fastify hello-world, what the in-process scenarios are compared with. `GET /` answers a small
 * JSON object; `POST /` parses a form body and answers the same (baseline for token issuance).
 */
const { values } = parseArgs({ options: { port: { type: 'string' } } })
const app = fastify({ logger: false })
app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, function parseForm (_request, body, done) {
  done(null, Object.fromEntries(new URLSearchParams(body as string)))
})
app.get('/', async function hello () {
  return { hello: 'world' }
})
app.post('/', async function helloPost () {
  return { hello: 'world' }
})
await app.listen({ port: Number(values.port), host: '127.0.0.1' })
process.on('SIGTERM', () => { void app.close().then(() => process.exit(0)) })
