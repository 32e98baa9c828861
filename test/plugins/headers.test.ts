import t from 'tap'
import headers from '../../plugins/headers/index.js'
import { testPolicy } from '../../src/pipeline/plugin-testing.js'

t.test('request headers are set and removed before the handler sees them', async (t) => {
  const harness = await testPolicy(headers, { request: { set: { 'X-Channel': 'gateway' }, remove: ['X-Debug'] } })
  t.teardown(harness.close)
  const res = await harness.inject({ url: '/test', headers: { 'x-debug': '1', 'x-channel': 'spoofed' } })
  const seen = (res.json() as { headers: Record<string, string> }).headers
  t.equal(seen['x-channel'], 'gateway')
  t.notOk('x-debug' in seen)
})

t.test('response headers are set and removed after the handler answered', async (t) => {
  const harness = await testPolicy(headers, { response: { set: { 'X-Frame-Options': 'DENY', 'Cache-Control': 'private' }, remove: ['x-request-id'] } }, {
    handler: (_request, reply) => {
      reply.header('x-request-id', 'set-by-handler').header('cache-control', 'no-store')
      return { ok: true }
    },
  })
  t.teardown(harness.close)
  const res = await harness.inject({ url: '/test' })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['x-frame-options'], 'DENY')
  t.equal(res.headers['cache-control'], 'private')
  t.notOk('x-request-id' in res.headers)
})

t.test('options with neither request nor response are refused', async (t) => {
  await t.rejects(testPolicy(headers, {}), { message: /options of policy "headers" refused/ })
})
