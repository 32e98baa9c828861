import t from 'tap'
import { buildTestApp } from '../helpers/build-app.js'

/**
 * A browser EventSource on the demo's live stream, from a page on http://localhost:3000: the demo config's `live`
 * service allows that origin, so the page can read the answer (refusals included); another origin gets no CORS
 * headers. The demo used to have no `cors` there.
 */
const gw = await buildTestApp()
t.teardown(() => gw.close())
const EVENTS = '/v1/stores/org_store_001/live/prices/events?count=1&access_token=not-a-token'

t.test('the allowed origin gets Access-Control-Allow-Origin on the stream route, a refusal included', async (t) => {
  const res = await gw.app.inject({ method: 'GET', url: EVENTS, headers: { origin: 'http://localhost:3000' } })
  t.equal(res.statusCode, 401)
  t.same({ origin: res.headers['access-control-allow-origin'], vary: res.headers.vary, body: res.json() }, { origin: 'http://localhost:3000', vary: 'Origin', body: { error: 'Unauthenticated.' } })
})

t.test('another origin gets none', async (t) => {
  const res = await gw.app.inject({ method: 'GET', url: EVENTS, headers: { origin: 'https://elsewhere.example' } })
  t.equal(res.statusCode, 401)
  t.equal(res.headers['access-control-allow-origin'], undefined)
})
