import t from 'tap'
import { buildTestApp } from '../helpers/build-app.js'

// One access-log line per request at info: "request completed" with the request's method and URL (secrets
// redacted), status and time; "incoming request" only at debug. fastify wrote both at info (two lines a request,
// three with a refusal's reason). Above info the app turns them off at boot.
type Line = { level: number, msg?: string, req?: { method?: string, url?: string }, res?: { statusCode?: number }, responseTime?: number }

function lines (logs: string[]): Line[] {
  return logs.join('').split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as Line)
}

t.test('at log level info each request writes one "request completed" line with its method, URL and status', async (t) => {
  const gw = await buildTestApp({ logLevel: 'info' })
  t.teardown(() => gw.close())
  const before = gw.logs.length
  const res = await gw.app.inject({ url: '/healthz?access_token=secret-value' })
  t.equal(res.statusCode, 200)
  const written = lines(gw.logs.slice(before))
  t.same(written.map((l) => l.msg), ['request completed'], 'one line, no "incoming request"')
  const line = written[0] as Line
  t.same({ level: line.level, method: line.req?.method, status: line.res?.statusCode }, { level: 30, method: 'GET', status: 200 })
  t.equal(line.req?.url, '/healthz?access_token=[Redacted]')
  t.type(line.responseTime, 'number')
})

t.test('at debug "incoming request" is written too, before the answer', async (t) => {
  const gw = await buildTestApp({ logLevel: 'debug' })
  t.teardown(() => gw.close())
  const before = gw.logs.length
  await gw.app.inject({ url: '/healthz' })
  const messages = lines(gw.logs.slice(before)).map((l) => l.msg)
  t.ok(messages.indexOf('incoming request') !== -1 && messages.indexOf('incoming request') < messages.indexOf('request completed'))
})
