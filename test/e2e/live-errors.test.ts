import t from 'tap'
import { send } from '../helpers/exchange-http.js'
import { liveSetup } from '../helpers/exchange-config.js'

const json = (body: string): unknown => JSON.parse(body)

t.test('a lane 4xx with a JSON body is mirrored as upstream_error with the lane body as a string (F5)', async (t) => {
  const { base, hq } = await liveSetup(t)
  const res = await send(base, { path: '/v1/stores/org_store_a/live/__sim/status/404', headers: hq })
  t.equal(res.status, 404)
  t.same(json(res.body), {
    error: 'upstream_error',
    upstream_status: 404,
    upstream_body: '{"lane_error":"failed with 404","lane":"a"}',
    message: 'The lane software answered 404.',
  })
  t.equal(res.headers['cache-control'], 'no-store')
})

t.test('a lane 4xx with an HTML body comes back as an escaped string in JSON (E6)', async (t) => {
  const { base, hq } = await liveSetup(t)
  const res = await send(base, { path: '/v1/stores/org_store_a/live/__sim/status/409?html=1', headers: hq })
  t.equal(res.status, 409)
  t.match(res.headers['content-type'], /^application\/json/)
  t.same(json(res.body), {
    error: 'upstream_error',
    upstream_status: 409,
    upstream_body: '<html><body><h1>Error 409</h1><script>alert("x")</script></body></html>',
    message: 'The lane software answered 409.',
  })
})

t.test('lane 400, 500 and 503 keep their status', async (t) => {
  const { base, hq } = await liveSetup(t)
  for (const status of [400, 500, 503]) {
    const res = await send(base, { path: `/v1/stores/org_store_a/live/__sim/status/${status}`, headers: hq })
    t.same([res.status, json(res.body)], [status, {
      error: 'upstream_error',
      upstream_status: status,
      upstream_body: `{"lane_error":"failed with ${status}","lane":"a"}`,
      message: `The lane software answered ${status}.`,
    }])
  }
})

t.test('a lane 401 is mirrored without the lane\'s WWW-Authenticate or Set-Cookie (F5)', async (t) => {
  const { base, laneA, hq } = await liveSetup(t)
  laneA.setMode({ kind: 'fail', status: 401 })
  const res = await send(base, { path: '/v1/stores/org_store_a/live/anything', headers: hq })
  t.equal(res.status, 401)
  t.equal(res.headers['www-authenticate'], undefined)
  t.equal(res.headers['set-cookie'], undefined)
  t.same(json(res.body), { error: 'upstream_error', upstream_status: 401, upstream_body: '{"lane_error":"failed with 401","lane":"a"}', message: 'The lane software answered 401.' })
})

t.test('a huge lane error body is truncated in upstream_body (E6)', async (t) => {
  const { base, hq } = await liveSetup(t, { live: { max_upstream_error_body_bytes: 1024 } })
  const res = await send(base, { path: '/v1/stores/org_store_a/live/__sim/big-error?bytes=500000', headers: hq })
  t.equal(res.status, 500)
  t.same(json(res.body), { error: 'upstream_error', upstream_status: 500, upstream_body: `${'x'.repeat(1024)} [truncated]`, message: 'The lane software answered 500.' })
})

t.test('a gzip-encoded lane error body is decoded before it is quoted', async (t) => {
  const { base, hq } = await liveSetup(t)
  const res = await send(base, { path: '/v1/stores/org_store_a/live/__sim/gzip-error', headers: hq })
  t.equal(res.status, 503)
  t.equal(res.headers['content-encoding'], undefined)
  t.same(json(res.body), { error: 'upstream_error', upstream_status: 503, upstream_body: '{"lane_error":"compressed"}', message: 'The lane software answered 503.' })
})

t.test('a lane that refuses connections answers 502 without a lane status or host (F6)', async (t) => {
  const { base, laneA, hq } = await liveSetup(t)
  const port = laneA.port
  await laneA.close()
  const res = await send(base, { path: '/v1/stores/org_store_a/live/items', headers: hq })
  t.equal(res.status, 502)
  t.same(json(res.body), { error: 'upstream_error', upstream_status: 0, upstream_failure: 'refused', upstream_body: '', message: 'The lane software could not be reached.' })
  t.notMatch(res.body, new RegExp(`127\\.0\\.0\\.1|${port}`))
})

t.test('a lane that resets before answering gives 502', async (t) => {
  const { base, laneA, hq } = await liveSetup(t)
  laneA.setMode('reset')
  const res = await send(base, { path: '/v1/stores/org_store_a/live/items', headers: hq })
  t.equal(res.status, 502)
  t.same(json(res.body), { error: 'upstream_error', upstream_status: 0, upstream_failure: 'reset', upstream_body: '', message: 'The lane software closed the connection before answering.' })
})

t.test('a lane that resets mid-body aborts the caller\'s response, and the gateway keeps serving (F7)', async (t) => {
  const { base, laneA, hq } = await liveSetup(t)
  laneA.setMode('reset-mid-body')
  const cut = await send(base, { path: '/v1/stores/org_store_a/live/items', headers: hq })
  t.equal(cut.status, 200)
  t.equal(cut.aborted, true)
  t.equal(cut.body, 'partial body, ')
  laneA.setMode('ok')
  const next = await send(base, { path: '/v1/stores/org_store_a/live/items', headers: hq })
  t.equal(next.status, 200)
  t.equal(next.aborted, false)
})

t.test('a lane that never answers gives 502 upstream_error with upstream_failure timeout, as the spec says (F6)', async (t) => {
  const { base, laneA, hq } = await liveSetup(t, { lane: { response_timeout_ms: 300 } })
  laneA.setMode('stall')
  const res = await send(base, { path: '/v1/stores/org_store_a/live/items', headers: hq })
  t.equal(res.status, 502)
  t.same(json(res.body), { error: 'upstream_error', upstream_status: 0, upstream_failure: 'timeout', upstream_body: '', message: 'The lane software did not answer in time.' })
})

t.test('a lane that goes silent mid-body is cut off: the caller sees an aborted response', async (t) => {
  const { base, hq } = await liveSetup(t, { lane: { response_timeout_ms: 300 } })
  const res = await send(base, { path: '/v1/stores/org_store_a/live/feed/stream?chunks=3&interval=5000', headers: hq })
  t.same([res.status, res.aborted, res.body], [200, true, 'chunk 1\n'])
})

t.test('a lane with an invalid status is a 502, never relayed', async (t) => {
  const { base, laneA, hq } = await liveSetup(t)
  laneA.setMode({ kind: 'fail', status: 999 })
  const res = await send(base, { path: '/v1/stores/org_store_a/live/items', headers: hq })
  t.same([res.status, json(res.body)], [502, { error: 'upstream_error', upstream_status: 0, upstream_failure: 'protocol', upstream_body: '', message: 'The lane software answered with an invalid status.' }])
})
