import t from 'tap'
import { buildTestApp } from '../helpers/build-app.js'

// fastify's per-request lines are info-level. Above info the app turns them off at boot (its LogController), which
// pino would drop anyway; at info they must still be written, which is what this guards.
t.test('at log level info each request writes "incoming request" and "request completed"', async (t) => {
  const gw = await buildTestApp({ logLevel: 'info' })
  t.teardown(() => gw.close())
  const res = await gw.app.inject({ url: '/healthz' })
  t.equal(res.statusCode, 200)
  const messages = gw.logs.join('').split('\n').filter((line) => line !== '').map((line) => (JSON.parse(line) as { msg?: string }).msg)
  t.ok(messages.includes('incoming request'), 'incoming request')
  t.ok(messages.includes('request completed'), 'request completed')
})
